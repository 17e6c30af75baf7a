package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/lockchaos/lockchaos/backend"
)

var _ backend.KeyProber = (*Node)(nil)

// ProbeKeys implements backend.KeyProber: who holds each of keys (lock
// names) on the server now, read as the witness reads it (heldSQL) on the
// node's admin connection (kept from a promotion); a key nobody holds is
// absent from the map. A failover probes the promoted standby with it.
func (n *Node) ProbeKeys(ctx context.Context, keys []string) (map[string]string, error) {
	cur := map[string]held{}
	err := n.withAdmin(ctx, func(conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, heldSQL)
		if err != nil {
			return err
		}
		var name string
		var pid int32
		_, err = pgx.ForEachRow(rows, []any{&name, &pid}, func() error {
			if slices.Contains(keys, name) && !slices.Contains(cur[name], pid) {
				cur[name] = append(cur[name], pid)
			}
			return nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: probe the locks: %w", n.Name(), err)
	}
	out := make(map[string]string, len(cur))
	for name, h := range cur {
		slices.Sort(h)
		out[name] = h.value()
	}
	return out, nil
}
