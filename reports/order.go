package reports

// Order is the one order of the matrix in every output (the terminal's
// table, Markdown, HTML): the scenarios and the locks in the order the
// run planned its cells, which summary.json's cells keep (a merge of
// shards keeps each shard's in turn). It reads the summary alone, so a
// report does not depend on which locks this build registers.
func Order(s *Summary) (scenarios, locks []string) {
	seenS, seenL := map[string]bool{}, map[string]bool{}
	for _, c := range s.Cells {
		if !seenS[c.Scenario] {
			seenS[c.Scenario] = true
			scenarios = append(scenarios, c.Scenario)
		}
		if !seenL[c.Lock] {
			seenL[c.Lock] = true
			locks = append(locks, c.Lock)
		}
	}
	return scenarios, locks
}
