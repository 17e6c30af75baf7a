package choose

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/margins"
)

// ErrMargins is a margins file that cannot be read.
var ErrMargins = errors.New("choose: margins")

// MarginFamilies are the families the table's own search runs: those the
// simulation searches in seconds (a holder's pause, a long critical
// section, a late reply, a lost release, a node restarting empty).
// `lockchaos margins` searches every family; its margins.json fills the
// table with --margins.
var MarginFamilies = []string{"pause", "slow-holder", "slow-reply", "one-way-loss", "restart-delay"}

// marginLocks are the rows' locks the simulation can search: the built-in
// Redis locks with a margin (a lock in a driver process, or on another
// service, is searched by `lockchaos margins` on real servers).
func marginLocks(rows []*Row, specs map[string]lockimpl.Spec) []lockimpl.Spec {
	var out []lockimpl.Spec
	for _, r := range rows {
		spec := specs[r.Name]
		if r.Place != "" || r.User || spec.OutOfProcess || !spec.Service.IsRedis() || spec.NeedsReplica ||
			margins.Searchable(spec) != nil || slices.ContainsFunc(out, func(s lockimpl.Spec) bool { return s.Name == spec.Name }) {
			continue
		}
		out = append(out, spec)
	}
	return out
}

// searchMargins searches locks' margins in the simulation sim: seeds per
// probe, a step of a tenth of the TTL, no confirmation on real Redis (the
// table's cells are that), no liveness margins (the table measures
// recovery in its own cells).
func searchMargins(ctx context.Context, sim backend.Backend, locks []lockimpl.Spec, seeds, parallel int,
	seed int64, outDir string) (*margins.Report, error) {
	fams, err := margins.FamiliesNamed(MarginFamilies)
	if err != nil {
		return nil, err
	}
	if outDir == "" {
		// The probes' histories and shrunk schedules go somewhere, never
		// into the working directory.
		if outDir, err = os.MkdirTemp("", "lockchaos-choose-margins-"); err != nil {
			return nil, err
		}
		defer func() { _ = os.RemoveAll(outDir) }()
	}
	cfg := margins.Config{Locks: locks, Families: fams, Backend: sim, Seeds: seeds, Seed: seed, Resolution: 0.1,
		Parallel: parallel, OutDir: outDir}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return margins.Run(ctx, cfg, nil, nil)
}

// ReadMargins reads a margins.json that `lockchaos margins` wrote.
func ReadMargins(path string) (*margins.Report, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMargins, err)
	}
	defer func() { _ = fh.Close() }()
	var rep margins.Report
	dec := json.NewDecoder(io.LimitReader(fh, 64<<20))
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("%w: %s is not a margins.json (lockchaos margins --out DIR writes DIR/margins.json): %w",
			ErrMargins, path, err)
	}
	if rep.Format != margins.FormatVersion {
		return nil, fmt.Errorf("%w: %s has format %d; this lockchaos reads format %d", ErrMargins, path, rep.Format,
			margins.FormatVersion)
	}
	return &rep, nil
}

// addMargins gives each row at its lock's own place the margins rep has
// for its lock, in TTLs.
func (p *Plan) addMargins(rep *margins.Report) []string {
	var fams []string
	for _, m := range rep.Margins {
		if !slices.Contains(fams, m.Family) {
			fams = append(fams, m.Family)
		}
		ttl := float64(max(m.TTL, time.Millisecond))
		for _, row := range p.Rows {
			if row.Lock != m.Lock || row.Place != "" {
				continue
			}
			mc := Margin{Family: m.Family, Broke: m.Broke, CapTTL: float64(m.Cap) / ttl, BreaksBelow: m.BreaksBelow,
				Agrees: m.Agrees, Note: m.Note}
			if m.Broke {
				mc.AtTTL, mc.HeldTTL = float64(m.At)/ttl, float64(m.Held)/ttl
			}
			if m.NotApplicable {
				mc.Note = "n/a: " + m.Note
			}
			row.Margins = append(row.Margins, mc)
		}
	}
	return fams
}

// Margin is the row's margin of family fam, or nil.
func (r *Row) Margin(fam string) *Margin {
	for i := range r.Margins {
		if r.Margins[i].Family == fam {
			return &r.Margins[i]
		}
	}
	return nil
}
