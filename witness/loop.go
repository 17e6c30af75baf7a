package witness

import (
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/backend"
)

const channelPrefix = "__keyspace@0__:"

// What each notification means for a lease key. Events not named here
// (incrby, append, hset...) make the key a counter or some other value,
// not a lease: it is not reported.
var (
	writes = map[string]backend.KeyOp{"set": backend.KeySet, "rename_to": backend.KeySet, "copy_to": backend.KeySet,
		"restore": backend.KeySet}
	expiries = map[string]bool{"expire": true, "persist": true}
	removals = map[string]backend.KeyOp{"del": backend.KeyDel, "rename_from": backend.KeyDel, "move_from": backend.KeyDel,
		"expired": backend.KeyExpired, "evicted": backend.KeyEvicted}
)

// loop reads frames until the connection ends.
func (s *session) loop() error {
	for {
		f, err := readFrame(s.r)
		if err != nil {
			return err
		}
		now := time.Now()
		if f.push {
			s.notified(f, now)
		} else {
			s.replied(f, now)
		}
		s.release()
		if err := s.flushOut(); err != nil {
			return err
		}
	}
}

// notified handles one keyspace notification.
func (s *session) notified(f frame, at time.Time) {
	if len(f.items) != 4 || f.items[0].str != "pmessage" {
		return // a subscribe confirmation, or a push of another kind
	}
	key, ok := strings.CutPrefix(f.items[2].str, channelPrefix)
	if !ok {
		return
	}
	if _, ok := s.w.match.Match(key); !ok || s.w.counters[key] {
		return
	}
	ev := f.items[3].str
	switch {
	case writes[ev] != "":
		s.changed(key)
		s.w.live[key] = "" // a lease key now; its value comes with the read
		s.ask(&pending{c: backend.KeyChange{Key: key, Op: backend.KeySet, At: at}, read: true})
	case expiries[ev]:
		if _, known := s.w.live[key]; !known {
			return // an expiry on a key never seen written: a counter's
		}
		if p := s.last[key]; p != nil && p.c.Op == backend.KeySet && p.replies > 0 && !p.ownExpiry {
			// SET PX fires set, then expire, for one command: the set's
			// read, not yet run, reads the expiry too.
			p.ownExpiry = true
			return
		}
		// A read still in flight reads this expiry, not the one before:
		// this one is reported even if it reads the same.
		force := false
		for _, p := range s.queue {
			if p.read && p.replies > 0 && p.c.Key == key {
				force = true
			}
		}
		s.ask(&pending{c: backend.KeyChange{Key: key, Op: backend.KeyExpire, At: at}, read: true, dedupe: !force})
	case removals[ev] != "":
		s.changed(key)
		v, known := s.w.live[key]
		if !known {
			return
		}
		delete(s.w.live, key)
		p := &pending{c: backend.KeyChange{Key: key, Op: removals[ev], Value: v, At: at}}
		s.queue = append(s.queue, p)
		s.last[key] = p
	default:
		s.w.counters[key] = true
		delete(s.w.live, key)
	}
}

// changed marks reads of key still in flight stale: the server ran them
// after this change, so they read its result, not the write they follow.
func (s *session) changed(key string) {
	for _, p := range s.queue {
		if p.read && p.replies > 0 && p.c.Key == key {
			p.stale = true
		}
	}
}

// ask queues a change and sends the read that completes it: GET and
// PTTL, written together (the server runs a client's buffered commands
// back to back). No MULTI: it would double the commands the witness adds
// to every write of a contended lock, and it is not needed for
// atomicity, since a change between the two is a notification before the
// PTTL's reply, which marks the read stale (changed).
func (s *session) ask(p *pending) {
	p.replies, p.sent = 2, time.Now()
	s.last[p.c.Key] = p
	if s.asking {
		p.replies = 4
		s.out = appendCommand(s.out, "ASKING")
	}
	s.out = appendCommand(s.out, "GET", p.c.Key)
	if s.asking {
		s.out = appendCommand(s.out, "ASKING")
	}
	s.out = appendCommand(s.out, "PTTL", p.c.Key)
	s.queue = append(s.queue, p)
}

func (s *session) flushOut() error {
	if len(s.out) == 0 {
		return nil
	}
	_, err := s.conn.Write(s.out)
	s.out = s.out[:0]
	return err
}

// replied gives a reply to the oldest read still waiting for one.
func (s *session) replied(f frame, at time.Time) {
	for _, p := range s.queue {
		if !p.read || p.replies == 0 {
			continue
		}
		p.replies--
		if s.asking && p.replies%2 == 1 {
			return // ASKING's +OK
		}
		if p.replies > 0 {
			p.got = f // the GET's
			return
		}
		s.complete(p, frame{items: []frame{p.got, f}}, at)
		return
	}
}

// complete fills a change from its read: [GET's reply, PTTL's].
func (s *session) complete(p *pending, exec frame, at time.Time) {
	if len(exec.items) != 2 || p.stale {
		// A value replaced before it could be read: the write is known,
		// its value is not (what was found on connecting, the changes
		// after it tell).
		if p.c.Op == backend.KeyPresent {
			p.c.Op = ""
		}
		p.c.Value = ""
		return
	}
	v, ttl := exec.items[0], exec.items[1].int
	if v.null || exec.items[0].err != "" || ttl == -2 {
		switch p.c.Op {
		case backend.KeyPresent:
			p.c.Op = backend.KeyAbsent
			if old, known := s.w.live[p.c.Key]; known {
				p.c.Value = old
				delete(s.w.live, p.c.Key)
			} else {
				p.c.Op = "" // never there, never known: nothing to say
			}
		default:
			p.c.Op = "" // gone before the read: its removal follows
		}
		return
	}
	p.c.Value = v.str
	if ttl >= 0 {
		// PTTL counts whole milliseconds left when the read ran, some
		// time between sending it and its reply: the middle, plus half a
		// millisecond for the truncation.
		ran := p.sent.Add(at.Sub(p.sent) / 2)
		p.c.Deadline = ran.Add(time.Duration(ttl)*time.Millisecond + 500*time.Microsecond)
	}
	if p.dedupe {
		if last, ok := s.w.live[p.c.Key]; ok && last == v.str && s.sameDeadline(p) {
			p.c.Op = ""
		}
	}
	s.w.live[p.c.Key] = v.str
	s.w.deadlines[p.c.Key] = p.c.Deadline
}

// sameDeadline says an expire changed nothing the witness had not read
// already (SET PX fires set, then expire, for one command).
func (s *session) sameDeadline(p *pending) bool {
	d := s.w.deadlines[p.c.Key].Sub(p.c.Deadline)
	return d < 2*time.Millisecond && d > -2*time.Millisecond
}

// release reports the changes at the head of the queue that are
// complete, in the server's order.
func (s *session) release() {
	n := 0
	for _, p := range s.queue {
		if p.read && p.replies > 0 {
			break
		}
		n++
		if p.c.Op != "" {
			s.w.emit(p.c)
		}
	}
	s.queue = s.queue[n:]
}
