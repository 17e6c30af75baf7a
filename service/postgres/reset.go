package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockchaos/lockchaos/backend"
)

var _ backend.ResourceNode = (*Node)(nil)

// ResetResource implements backend.ResourceNode: it empties the resource
// table (its rows come back at 0 on first use), so a part's history starts
// from zero as the harness's own resource does. It runs before the part's
// pods exist, on a direct connection no fault touches.
func (n *Node) ResetResource(ctx context.Context, _ string) error {
	// A standby cannot write: the primary's delete reaches it by the WAL.
	if n.standby() {
		return nil
	}
	return ResetResource(ctx, n.Name(), n.URL())
}

// ResetResource empties the resource table of the server at url (the
// node named name, for errors), on a connection of its own.
func ResetResource(ctx context.Context, name, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("postgres: %s: reset the resource: %w", name, err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "DELETE FROM "+ResourceTable); err != nil {
		return fmt.Errorf("postgres: %s: reset the resource: %w", name, err)
	}
	return nil
}
