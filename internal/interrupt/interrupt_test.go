package interrupt_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/internal/interrupt"
)

func TestCodesAreTheShells(t *testing.T) {
	if interrupt.Code(syscall.SIGINT) != 130 || interrupt.Code(syscall.SIGTERM) != 143 || interrupt.Code(nil) != 0 {
		t.Fatal("SIGINT 130, SIGTERM 143, none 0")
	}
	if interrupt.Name(130) != "SIGINT" || interrupt.Name(143) != "SIGTERM" {
		t.Fatal("names")
	}
}

// Await returns what the work returned, and leaves work that does not end
// once its context has ended and the grace has passed.
func TestAwaitLeavesStuckWorkAfterTheGrace(t *testing.T) {
	want := errors.New("done")
	if v, err := interrupt.Await(context.Background(), 0, func() (int, error) { return 7, want }); v != 7 || !errors.Is(err, want) {
		t.Fatalf("got %d, %v", v, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stuck := make(chan struct{})
	defer close(stuck)
	v, err := interrupt.Await(ctx, 10*time.Millisecond, func() (int, error) { <-stuck; return 1, nil })
	if v != 0 || err != nil {
		t.Fatalf("stuck work: got %d, %v; want the zero values", v, err)
	}
}
