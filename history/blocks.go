package history

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
)

// blockSize is how much of a file one parse task takes: large enough that
// handing it over costs nothing, small enough that every core gets work.
const blockSize = 1 << 20

// lineError is a line that neither parser could read.
type lineError struct {
	n   int
	msg string
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %s", e.n, e.msg) }

// block is a run of whole lines and, once parsed, their decoded form.
type block struct {
	first int // the number of its first line
	data  []byte
	lines []line
	nums  []int
	err   error
	done  chan struct{}
	spare *spares
}

// spares keeps the buffers of blocks done with for the next ones: a file
// of 200 MB is read into 200 buffers of 1 MiB and parsed into as many
// arrays of lines, garbage the GC would otherwise chase for the whole
// load. Only a few blocks are in flight at once, so a few of each serve.
type spares struct {
	data  chan []byte
	lines chan []line
	nums  chan []int
}

func newSpares(n int) *spares {
	return &spares{data: make(chan []byte, n), lines: make(chan []line, n), nums: make(chan []int, n)}
}

// applied keeps the arrays of a block whose lines were applied (the
// events hold copies of what they keep).
func (s *spares) applied(b *block) {
	put(s.lines, b.lines)
	put(s.nums, b.nums)
	b.lines, b.nums = nil, nil
}

// get returns a spare from c, or nil when none is left.
func get[T any](c chan []T) []T {
	select {
	case b := <-c:
		return b[:0]
	default:
		return nil
	}
}

// put keeps b in c, unless c is full (or nil).
func put[T any](c chan []T, b []T) {
	select {
	case c <- b:
	default:
	}
}

// parseBlocks reads r (whose first line is number first) in blocks of
// whole lines, parses them on every core and calls apply for each
// non-empty line in file order, stopping at the first error.
func parseBlocks(r io.Reader, first int, apply func(*line, int) error) error {
	workers := max(1, runtime.GOMAXPROCS(0))
	todo := make(chan *block, workers)
	ordered := make(chan *block, 2*workers)
	stop := make(chan struct{})
	spare := newSpares(4*workers + 4) // more than the blocks in flight
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each worker interns on its own: a few copies of each
			// repeated string, and no lock on the hot path.
			p := newLineParser()
			for b := range todo {
				b.parse(p)
				close(b.done)
			}
		}()
	}
	var readErr error
	go func() {
		defer close(ordered)
		defer close(todo)
		readErr = readBlocks(r, first, spare, func(b *block) bool {
			select {
			case ordered <- b:
			case <-stop:
				return false
			}
			select {
			case todo <- b:
				return true
			case <-stop:
				close(b.done) // never parsed; nobody waits for it
				return false
			}
		})
	}()
	var err error
	for b := range ordered {
		if err != nil {
			continue // drain, so the reader and workers finish
		}
		<-b.done
		for i := range b.lines {
			if err = apply(&b.lines[i], b.nums[i]); err != nil {
				break
			}
		}
		if err == nil && b.err != nil {
			err = b.err
		}
		spare.applied(b)
		if err != nil {
			close(stop)
		}
	}
	wg.Wait()
	if err != nil {
		return err
	}
	return readErr
}

// readBlocks cuts r into blocks that end at a newline and hands each to
// emit (false: stop reading), in buffers from spare when it has any.
func readBlocks(r io.Reader, first int, spare *spares, emit func(*block) bool) error {
	var carry []byte
	// partial is a read that holds no line break yet (a reader hands
	// back what it has, a few bytes at times): the next read goes on in it.
	var partial []byte
	n := first
	for {
		buf := partial
		partial = nil
		if buf == nil {
			// A block reads what fits past the carried part line: a
			// spare (blockSize) has room for half a block at least.
			buf = get(spare.data)
			if cap(buf)-len(carry) < blockSize/2 {
				buf = make([]byte, 0, len(carry)+blockSize)
			}
			// carry may lie in buf itself (its block parsed and handed
			// back): copy moves it to the front.
			buf = buf[:len(carry)]
			copy(buf, carry)
		}
		if len(buf) == cap(buf) { // a long line
			buf = slices.Grow(buf, blockSize)
		}
		carry = nil
		had := len(buf)
		m, err := io.ReadAtLeast(r, buf[had:cap(buf)], 1) // what is there: a followed file grows by lines
		buf = buf[:had+m]
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			return err
		}
		if eof && len(buf) == 0 {
			return nil // nothing after the last line break
		}
		end := bytes.LastIndexByte(buf, '\n') + 1
		if eof {
			end = len(buf)
		}
		if end == 0 {
			if len(buf) > maxLine {
				return &lineError{n: n, msg: fmt.Sprintf("line longer than %d bytes", maxLine)}
			}
			partial = buf
			continue
		}
		b := &block{first: n, data: buf[:end], done: make(chan struct{}), spare: spare}
		n += bytes.Count(b.data, []byte{'\n'})
		carry = buf[end:]
		if len(b.data) > 0 && !emit(b) {
			return nil
		}
		if eof {
			return nil
		}
	}
}

// parse decodes the block's lines: the fast scanner first, the strict
// decoder for anything it does not expect (which also words the error).
func (b *block) parse(p *lineParser) {
	data := b.data
	n := b.first
	count := bytes.Count(data, []byte{'\n'}) + 1
	b.lines = slices.Grow(get(b.spare.lines), count)
	b.nums = slices.Grow(get(b.spare.nums), count)
	for len(data) > 0 {
		raw := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		num := n
		n++
		if len(raw) > maxLine {
			b.err = &lineError{n: num, msg: fmt.Sprintf("line longer than %d bytes", maxLine)}
			return
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		b.lines = append(b.lines, line{})
		l := &b.lines[len(b.lines)-1]
		if err := p.parse(raw, l); err != nil {
			*l = line{} // nothing the fast scanner half-read may leak into it
			if err := decodeStrict(raw, l); err != nil {
				b.lines = b.lines[:len(b.lines)-1]
				b.err = &lineError{n: num, msg: err.Error()}
				return
			}
		}
		b.nums = append(b.nums, num)
	}
	put(b.spare.data, b.data[:0]) // the lines hold copies of what they need
	b.data = nil
}
