package margins

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// FormatVersion of margins.json (docs/schema/margins.v1.json).
const FormatVersion = 1

// Report is a search's whole result, as margins.json holds it.
type Report struct {
	Format     int           `json:"format"`
	TTL        time.Duration `json:"ttl_ns"`
	Seed       int64         `json:"seed"`
	Seeds      int           `json:"seeds"`
	Resolution float64       `json:"resolution_ttl"`
	Backend    string        `json:"backend"`
	Confirm    string        `json:"confirm_backend,omitempty"`
	Elapsed    time.Duration `json:"elapsed_ns"`
	Margins    []Margin      `json:"margins"`
	// Recoveries are the liveness margins: how long a crashed holder's
	// key stays taken, per lock and TTL.
	Recoveries []Recovery `json:"recoveries,omitempty"`
	// Tolerances are the liveness margins under a silent minority: how
	// long a free key waits, per multi-node lock and TTL.
	Tolerances []Tolerance `json:"tolerances,omitempty"`
	// TimeScale stretched the runs on real Redis (1 in the simulation).
	TimeScale float64 `json:"time_scale,omitempty"`
}

// WriteJSON writes the report as margins.json does.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the terminal table: one row per lock and family.
func (r *Report) WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FAMILY\tLOCK\tBREAKS AT\tHOLDS AT\tPREDICTED\tAGREES\tREAL REDIS (below / above)\tSCHEDULES")
	for _, m := range r.Margins {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", m.Family, m.Lock, m.breaks(), m.holds(), m.Predicted.text(m.TTL),
			yesNo(m.Agrees), m.confirmation(), m.Schedules)
	}
	_ = tw.Flush()
	if len(r.Recoveries) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "After a crash (pod-crash), the key stays taken:")
		for _, rc := range r.Recoveries {
			mark := ""
			if !rc.Agrees {
				mark = fmt.Sprintf(" (predicted at most %s: DISAGREES)", ttlWords(rc.Predicted))
			}
			fmt.Fprintf(w, "  %s%s\n", rc, mark)
		}
	}
	if len(r.Tolerances) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "While a minority of nodes is silently gone (minority-partition), a free key waits:")
		for _, t := range r.Tolerances {
			mark := ""
			if !t.Agrees {
				mark = fmt.Sprintf(" (predicted: %s: DISAGREES)", t.predicted())
			}
			fmt.Fprintf(w, "  %s%s\n", t, mark)
		}
	}
}

// Sentences are what a team reads for its lock: "your lock, TTL 10 s,
// breaks under pauses of 9.8 s and more; slow replies never".
func (r *Report) Sentences() []string {
	byLock := map[string][]string{}
	var locks []string
	for _, m := range r.Margins {
		if byLock[m.Lock] == nil {
			locks = append(locks, m.Lock)
		}
		part := fmt.Sprintf("%s never (up to %s)", m.Family, ttlWords(m.Cap))
		switch {
		case m.NotApplicable:
			part = m.Family + ": n/a"
		case m.Searched == "-":
			part = m.Family + ": not searched (the simulation cannot run it)"
		case m.Broke && m.BreaksBelow:
			part = fmt.Sprintf("%s of %s and less", m.Family, ttlWords(m.At))
		case m.Broke:
			part = fmt.Sprintf("%s of %s and more", m.Family, ttlWords(m.At))
		case m.BreaksBelow:
			part = m.Family + " never"
		}
		byLock[m.Lock] = append(byLock[m.Lock], part)
	}
	out := make([]string, 0, len(locks))
	for _, l := range locks {
		out = append(out, fmt.Sprintf("%s, TTL %s, breaks under %s", l, ttlWords(r.TTL), strings.Join(byLock[l], "; ")))
	}
	return out
}

func (m Margin) breaks() string {
	if m.NotApplicable {
		return "n/a"
	}
	if m.Searched == "-" {
		return "not in the simulation: --backend process"
	}
	on := ""
	if m.Searched != "sim" {
		on = " on " + m.Searched
	}
	switch {
	case !m.Broke && m.BreaksBelow:
		return "never (not even at 0)" + on
	case !m.Broke:
		return fmt.Sprintf("never (up to %.0fx TTL)", float64(m.Cap)/float64(m.TTL)) + on
	case m.BreaksBelow:
		return fmt.Sprintf("%s (%.2fx TTL) or less", ttlWords(m.At), float64(m.At)/float64(m.TTL)) + on
	}
	return fmt.Sprintf("%s (%.2fx TTL)", ttlWords(m.At), float64(m.At)/float64(m.TTL)) + on
}

// holds is the magnitude the lock held at, saying so when the probe
// there rests on fewer decisive runs than it ran (an inconclusive run
// held nothing: the fault never reached its dangerous moment enough).
func (m Margin) holds() string {
	if !m.Broke {
		return "-"
	}
	s := fmt.Sprintf("%s (%.2fx)", ttlWords(m.Held), float64(m.Held)/float64(m.TTL))
	if m.BreaksBelow {
		s += " and more"
	}
	for _, p := range m.Probes {
		if p.Magnitude == m.Held && p.Decisive() < p.Runs {
			s += fmt.Sprintf(", on %d decisive run(s) of %d (%d inconclusive)", p.Decisive(), p.Runs, p.Inconclusive)
			break
		}
	}
	return s
}

func (m Margin) confirmation() string {
	if m.Below == nil || m.Above == nil {
		return "-"
	}
	mark := "agrees"
	if m.Confirmed != nil && !*m.Confirmed {
		mark = "DISAGREES"
	}
	return fmt.Sprintf("%d/%d%s at %s, %d/%d%s at %s: %s", m.Below.Broke, m.Below.Runs, inconclusiveText(*m.Below),
		ttlWords(m.Below.Magnitude), m.Above.Broke, m.Above.Runs, inconclusiveText(*m.Above), ttlWords(m.Above.Magnitude), mark)
}

// inconclusiveText: " (2 inconclusive)", "" for none.
func inconclusiveText(p Probe) string {
	if p.Inconclusive == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d inconclusive)", p.Inconclusive)
}

func (p Prediction) text(ttl time.Duration) string {
	if !p.Breaks {
		return "never"
	}
	return fmt.Sprintf("%.2f-%.2fx TTL", float64(p.Lo)/float64(ttl), float64(p.Hi)/float64(ttl))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

// ttlWords renders a duration for people: "306 ms", "9.80 s".
func ttlWords(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%d ms", d.Round(time.Millisecond).Milliseconds())
}

// curve is a margin's probes by magnitude, for the plot.
func (m Margin) curve() []Probe {
	ps := append([]Probe(nil), m.Probes...)
	sort.Slice(ps, func(i, j int) bool { return ps[i].Magnitude < ps[j].Magnitude })
	return ps
}

// Replays are the commands that replay each boundary's smallest breaking
// schedule (the one found.yaml holds) on real Redis, one a margin that
// has one, each after its family and lock: "pause/token: lockchaos run ...".
func (r *Report) Replays() []string {
	var out []string
	for _, m := range r.Margins {
		if m.Shrunk != nil && m.Shrunk.Replay != "" {
			out = append(out, fmt.Sprintf("%s/%s: %s", m.Family, m.Lock, m.Shrunk.Replay))
		}
	}
	return out
}
