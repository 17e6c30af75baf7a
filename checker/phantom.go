package checker

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// PhantomLease: no lease the server held on a lock key belonged to
// nobody. A lease is a phantom when its value is no holder's token and
// every acquire that could have written it was answered "refused", and
// it outlived that answer: the lock told its caller no while the server
// held the key for it, and every pod was kept out until the lease ran
// out. A go-redis client that resends a SET NX whose reply timed out
// does exactly this (the resent SET NX finds the pod's own key and the
// lock reads "key exists" as a refusal).
//
// It is a liveness property (the harm is a key nobody can take), judged
// from the witness's values, and decisive: a value on the server is a
// fact, and a refusal is the lock's definite word. Where the witness
// cannot tell (no witness, a lock whose holds carry no token, an acquire
// that ended indefinite and so admitted it may have won) nothing is
// judged and the note says so. A history checked in chunks is judged
// chunk by chunk: a lease that spans a cut is measured to the cut, and
// one heard after a cut is judged as written by no acquire.
const PhantomLease Property = "phantom-lease"

// noHolderToken is phantom-lease's note before the witness has seen a
// holder's token: a later chunk of the history that sees one judges, and
// its note stands for the whole (Report.merge).
const noHolderToken = "not judged: the witness saw no holder's token on the server"

// phantomSlack is how long a lease may outlive its writer's refusal
// unjudged: a lock that gives up on a write it made (Redlock, short of
// its quorum in time) deletes it before answering, and the witness hears
// the delete late, as it hears a release's (releaseHeard).
const phantomSlack = 2 * releaseHeard

// phantom is one lease nobody believed they held, with the acquires that
// could have written it.
type phantom struct {
	l       lease
	writers []*history.Event // refused acquires in flight at the write (none: no acquire)
	freed   int64            // when nobody could still believe it held: the latest refusal, or the write
	others  []int            // other clients refused while it stood, after freed
	refused int              // their refusals
	lastTry int64            // the latest return of their attempts
}

// checkPhantoms judges every lease on a lock key against the acquires
// in flight when it was written, and adds the time each phantom kept
// trying pods out past the recovery bound to deadlock-free (df).
// lockKeys are the server keys a holder's token was written to (not a
// fence counter beside one): those found here are added.
func checkPhantoms(ls []lease, srv serverFacts, evs []history.Event, holds []Hold, hdr history.Header, opts Options,
	df *Result) Result {
	r := Result{Property: PhantomLease, Status: Pass, Decisive: true}
	tokens, lockKeys, note := lockKeysOf(ls, srv, holds)
	if note != "" {
		r.Note = note
		return r
	}
	judged, doubted := df.Judged, 0
	var acqs map[string][]*history.Event
	acq := func(key string) []*history.Event {
		if acqs == nil { // most histories have no lease to attribute: no pass over their events
			acqs = acquiresByKey(srv.ph.carried(), evs)
		}
		return acqs[key]
	}
	var pending []lease
	for _, l := range ls {
		if !lockKeys[l.serverKey] || l.found || srv.ph.carriesHeld(l) {
			continue
		}
		if !tokens[l.value] && srv.ph != nil && l.ended == history.LeaseLive {
			pending = append(pending, l) // still there at the cut: judged once it ends
			continue
		}
		r.Operations++
		if tokens[l.value] {
			continue
		}
		p, doubt := attribute(l, acq(l.key), int64(recoverBound(hdr)))
		doubted += b2i(doubt)
		if doubt || l.to-p.freed <= int64(phantomSlack) {
			continue
		}
		p.blocked(acq(l.key))
		r.ViolationCount++
		r.Judged++
		if len(r.Violations) < opts.MaxViolations {
			r.Violations = append(r.Violations, p.violation())
		}
		phantomLiveness(p, recoverBound(hdr), opts, df)
	}
	srv.ph.keep(pending, evs, acq)
	if r.ViolationCount > 0 {
		r.Status = Fail
	}
	df.Note = phantomNote(df.Note, judged, df.Judged-judged)
	if doubted > 0 {
		r.Note = fmt.Sprintf("%d lease(s) no holder's token named may have been written by an acquire that ended "+
			"indefinite (in flight, or given up on within the recovery bound before): the lock admitted it may have won, "+
			"not judged", doubted)
	}
	return r
}

// lockKeysOf returns the holders' tokens and the server keys a holder's
// token was written to (with earlier chunks' over a cut), or the note that
// says why no lease can be judged.
func lockKeysOf(ls []lease, srv serverFacts, holds []Hold) (tokens, lockKeys map[string]bool, note string) {
	tokens = map[string]bool{}
	for _, h := range holds {
		if h.Token == "" {
			return nil, nil, "not judged: the lock's holds carry no token, so a value on the server cannot be told to be nobody's"
		}
		tokens[h.Token] = true
	}
	lockKeys = srv.lockKeys
	for _, l := range ls {
		if tokens[l.value] {
			lockKeys[l.serverKey] = true
		}
	}
	if len(lockKeys) == 0 {
		return nil, nil, noHolderToken
	}
	return tokens, lockKeys, ""
}

// acquiresByKey lists each key's acquires, by call: those carried over a
// cut (earlier), then evs's (by call).
func acquiresByKey(carried, evs []history.Event) map[string][]*history.Event {
	out := map[string][]*history.Event{}
	for _, es := range [][]history.Event{carried, evs} {
		for i := range es {
			if e := &es[i]; e.Kind == history.Acquire {
				out[e.Key] = append(out[e.Key], e)
			}
		}
	}
	return out
}

// attribute finds the acquires that could have written l: those in
// flight when the witness heard the write, or, the witness hearing late,
// none being, those that returned at most its lateness before. An
// acquire that returned ok wrote its own token, not this value. doubt:
// an acquire that ended indefinite may have written it, in flight then
// or given up on at most stale before (a write stuck in a stalled
// server's input lands after its caller timed out): the lock never said
// that one lost.
func attribute(l lease, acqs []*history.Event, stale int64) (phantom, bool) {
	n := sort.Search(len(acqs), func(i int) bool { return acqs[i].Call > l.from })
	for _, e := range acqs[:n] {
		if e.Outcome == history.Indefinite && (e.Open || e.Return >= l.from-stale) {
			return phantom{l: l, freed: l.from}, true
		}
	}
	for _, late := range []int64{0, releaseHeard} {
		p := phantom{l: l, freed: l.from}
		for _, e := range acqs[:n] {
			if e.Outcome == history.Refused && e.Return >= l.from-late {
				p.writers = append(p.writers, e)
				p.freed = max(p.freed, e.Return)
			}
		}
		if len(p.writers) > 0 {
			return p, false
		}
	}
	return phantom{l: l, freed: l.from}, false
}

// blocked counts the other clients' refusals while the phantom stood,
// after the last refusal that could be its writer's.
func (p *phantom) blocked(acqs []*history.Event) {
	mine := map[int]bool{}
	for _, w := range p.writers {
		mine[w.Client] = true
	}
	seen := map[int]bool{}
	from := sort.Search(len(acqs), func(i int) bool { return acqs[i].Call >= p.freed })
	for _, e := range acqs[from:] {
		if e.Call >= p.l.to {
			break
		}
		if mine[e.Client] || e.Outcome != history.Refused {
			continue
		}
		p.refused++
		p.lastTry = max(p.lastTry, e.Return)
		if !seen[e.Client] {
			seen[e.Client] = true
			p.others = append(p.others, e.Client)
		}
	}
	sort.Ints(p.others)
}

// violation words a phantom: the acquire, what it said, and how long the
// key sat taken while others tried.
func (p *phantom) violation() Violation {
	l := p.l
	v := Violation{Property: PhantomLease, Key: l.key, Clients: p.others, At: p.freed + int64(phantomSlack),
		Start: l.from, End: l.to}
	stood := fmt.Sprintf("stayed on %s until %s (%s)", l.where, history.Seconds(l.to), l.ended)
	if l.ended == history.LeaseLive {
		stood = fmt.Sprintf("was still on %s when the history ended at %s", l.where, history.Seconds(l.to))
	}
	var head string
	switch len(p.writers) {
	case 0:
		head = fmt.Sprintf("the server wrote %s to %s at %s while no acquire was in flight; it %s, %s a lease nobody "+
			"believed it held", short(l.value), l.key, history.Seconds(l.from), stood, durText(time.Duration(l.to-l.from)))
	default:
		var who []string
		for _, w := range p.writers {
			v.Clients = append(v.Clients, w.Client)
			v.Events = append(v.Events, w.ID)
			who = append(who, fmt.Sprintf("client %d's acquire of %s (called at %s, refused at %s)", w.Client, w.Key,
				history.Seconds(w.Call), history.Seconds(w.Return)))
		}
		writer := who[0]
		if len(who) > 1 {
			writer = "one of " + listText(who)
		}
		head = fmt.Sprintf("%s wrote %s (heard at %s) and was answered refused though its write had landed (a retried "+
			"SET NX that found the pod's own key answers so); the value %s, a lease nobody believed it held for %s "+
			"after the refusal",
			writer, short(l.value), history.Seconds(l.from), stood, durText(time.Duration(l.to-p.freed)))
	}
	if len(p.others) == 0 {
		return withSummary(v, head+"; nobody else tried meanwhile")
	}
	return withSummary(v, fmt.Sprintf("%s; %s tried and %s refused %d time(s) while it sat taken", head,
		clientsText(p.others), plural(len(p.others), "was", "were"), p.refused))
}

func withSummary(v Violation, s string) Violation { v.Summary = s; return v }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// phantomLiveness counts a phantom in deadlock-free as a stopped
// holder's lease is counted: from when nobody could still believe they
// held the key, while other pods kept trying, against the recovery
// bound. A phantom that outlived the bound while someone still tried
// leaves the key stuck.
func phantomLiveness(p phantom, bound time.Duration, opts Options, df *Result) {
	if len(p.others) == 0 {
		return
	}
	df.Operations++
	df.Judged++
	taken := time.Duration(p.l.to - p.freed)
	if taken <= bound || p.lastTry <= p.freed+int64(bound) {
		return
	}
	df.ViolationCount++
	df.Status = Fail
	if len(df.Violations) >= opts.MaxViolations {
		return
	}
	defer slices.SortStableFunc(df.Violations, func(a, b Violation) int { return cmp.Compare(a.At, b.At) })
	df.Violations = append(df.Violations, Violation{Property: DeadlockFree, Key: p.l.key, Clients: p.others,
		Events: phantomEvents(p), At: p.freed + int64(bound), Start: p.freed, End: p.l.to,
		Summary: fmt.Sprintf("a phantom lease held %s for %s after %s, though no pod believed it held it (%s kept "+
			"trying; bound %s): stuck", p.l.key, durText(taken), phantomCause(p), clientsText(p.others), durText(bound))})
}

func phantomEvents(p phantom) []int64 {
	var ids []int64
	for _, w := range p.writers {
		ids = append(ids, w.ID)
	}
	return ids
}

// phantomCause names when the key became nobody's.
func phantomCause(p phantom) string {
	if len(p.writers) == 0 {
		return "the server wrote it with no acquire in flight at " + history.Seconds(p.l.from)
	}
	var cs []string
	for _, w := range p.writers {
		cs = append(cs, fmt.Sprint(w.Client))
	}
	return fmt.Sprintf("client %s's acquire was refused at %s", strings.Join(cs, "/"), history.Seconds(p.freed))
}

// phantomNote adds to deadlock-free's note the n phantoms it judged
// beside the stopped holders the sweep judged (swept): its "nothing to
// judge" is then about stopped holders only.
func phantomNote(note string, swept, n int) string {
	if n == 0 {
		return note
	}
	ph := fmt.Sprintf("%d phantom lease(s) judged as a stopped holder's lease would be (see phantom-lease)", n)
	if swept == 0 {
		return "no holder stopped while another pod tried; " + ph
	}
	return strings.TrimPrefix(note+"; "+ph, "; ")
}
