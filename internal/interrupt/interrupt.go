// Package interrupt is how a command hears SIGINT and SIGTERM: a context
// they cancel, the signal that did, and the exit code a shell reports for
// it (130, 143). Every long command (run, check, report, margins) ends
// the same way when interrupted.
package interrupt

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Context is cancelled on SIGINT or SIGTERM; caught reports which (nil:
// none). stop stops listening and cancels the context.
func Context() (ctx context.Context, stop func(), caught func() os.Signal) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	var got os.Signal
	done := make(chan struct{})
	go func() {
		select {
		case got = <-ch:
			cancel()
		case <-done:
		}
	}()
	stop = func() {
		signal.Stop(ch)
		select {
		case <-done:
		default:
			close(done)
		}
		cancel()
	}
	caught = func() os.Signal {
		if ctx.Err() == nil {
			return nil
		}
		select {
		case <-done:
		default:
		}
		return got
	}
	return ctx, stop, caught
}

// Bounded is a context that ends after limit, or at SIGINT or SIGTERM.
// done, called once the work is over, stops listening and returns the
// signal that came, or nil.
func Bounded(limit time.Duration) (ctx context.Context, done func() os.Signal) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	var caught os.Signal
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case caught = <-ch:
			cancel()
		case <-stop:
		}
	}()
	return ctx, func() os.Signal {
		signal.Stop(ch)
		close(stop)
		<-stopped
		cancel()
		return caught
	}
}

// Await runs fn in a goroutine of its own and returns what it returned;
// once ctx ends, fn is given grace more to finish, then left (a read of a
// FIFO nobody writes never returns): its results are then zero, and the
// caller asks caught why.
func Await[T any](ctx context.Context, grace time.Duration, fn func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := fn()
		done <- result{v, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		select {
		case r = <-done:
		case <-time.After(grace):
		}
	}
	return r.v, r.err
}

// Code is the exit code of a command a signal cut short: 130 for SIGINT,
// 143 for SIGTERM (128 + the signal's number, as a shell reports it); 0
// for none.
func Code(sig os.Signal) int {
	switch sig {
	case syscall.SIGINT:
		return 130
	case syscall.SIGTERM:
		return 143
	}
	return 0
}

// Name names the signal behind an interrupt's exit code.
func Name(code int) string {
	return map[int]string{130: "SIGINT", 143: "SIGTERM"}[code]
}
