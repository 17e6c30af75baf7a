package reports

import "errors"

// WriteAll writes every report of a run into dir: summary.json (its
// histories named relative to dir), junit.xml and the HTML pages. It
// returns the files it wrote, the HTML it rendered (nil if none), and why
// any other was not written: a report that failed does not stop the
// others. opts are the pages' (their Verify re-checks each history).
func WriteAll(dir string, s *Summary, opts HTMLOptions) (wrote []string, html *HTMLResult, err error) {
	RelativeHistories(dir, s)
	jsonPath, errJSON := WriteJSON(dir, s)
	if errJSON == nil {
		wrote = append(wrote, jsonPath)
	}
	junitPath, errJUnit := WriteJUnit(dir, s)
	if errJUnit == nil {
		wrote = append(wrote, junitPath)
	}
	html, errHTML := WriteHTML(dir, s, opts)
	return wrote, html, errors.Join(errJSON, errJUnit, errHTML)
}
