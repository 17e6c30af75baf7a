package faults

// Family is what a fault does to a lock, whatever the service: a paused
// holder is one family on Redis, PostgreSQL and etcd alike, though each
// service's scenarios drive it with their own kinds and times. `lockchaos
// choose` gives each family a column, so locks on different services
// compare side by side. Each kind names its family in its own file.
type Family string

// The families, in the order a comparison shows them: what strikes the
// holder first, then what strikes the servers.
const (
	FamilySlowHolder  Family = "slow holder"
	FamilyPause       Family = "paused holder"
	FamilyLateReply   Family = "late reply"
	FamilyHolderCut   Family = "holder cut off"
	FamilyHolderCrash Family = "holder crashed"
	FamilyHolderHang  Family = "holder hung"
	FamilyFailover    Family = "failover"
	FamilyServerSplit Family = "primary split"
	FamilyNodeRestart Family = "node restarts empty"
	FamilyMinority    Family = "minority cut off"
	FamilyResharding  Family = "slot moved"
	FamilyClock       Family = "clock jump"
)

// familyDocs say what each family is, in the order Families lists them.
var familyDocs = []struct {
	f   Family
	doc string
}{
	{FamilySlowHolder, "a critical section runs past the TTL"},
	{FamilyPause, "a holder's process is frozen (stop-the-world) past the TTL"},
	{FamilyLateReply, "the answer to a winning acquire arrives late"},
	{FamilyHolderCut, "a holder is silently cut off from the servers while it works"},
	{FamilyHolderCrash, "a holder dies while holding"},
	{FamilyHolderHang, "a holder's worker hangs holding the lock while its process lives on"},
	{FamilyFailover, "the server holding the lock dies (or is failed over) and another takes its place"},
	{FamilyServerSplit, "the primary or leader is cut from its peers while pods still reach it"},
	{FamilyNodeRestart, "a lock node restarts with no data"},
	{FamilyMinority, "the pods lose a minority of the lock's nodes"},
	{FamilyResharding, "the lock key's slot moves to another shard"},
	{FamilyClock, "a server's clock jumps"},
}

// Families are every family, in the order a comparison shows them.
func Families() []Family {
	out := make([]Family, len(familyDocs))
	for i, d := range familyDocs {
		out[i] = d.f
	}
	return out
}

// Doc says what the family is.
func (f Family) Doc() string {
	for _, d := range familyDocs {
		if d.f == f {
			return d.doc
		}
	}
	return ""
}
