package session

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/verify"
)

// report writes summary.json, junit.xml and the HTML pages, and shows the
// outcome: the table on Stdout, or the summary line of the JSON stream. It
// names only the files it wrote, and returns why any other was not.
func (s *session) report(sum *reports.Summary) error {
	out := s.Out
	wrote, html, err := reports.WriteAll(out, sum, reports.HTMLOptions{Verify: verify.Options{}.ForPages})
	if err != nil {
		fmt.Fprintf(s.Stderr, "lockchaos run: writing reports: %v\n", err)
	}
	if html != nil {
		for _, u := range html.Unread {
			fmt.Fprintf(s.Stderr, "lockchaos run: writing reports: %v\n", u)
		}
	}
	if s.JSON {
		s.stream.Emit(reports.StreamEvent{Type: "summary", Summary: sum})
		return err
	}
	w := s.Stdout
	reports.WriteText(w, sum, reports.UseColour(w))
	if html != nil {
		wrote = append(wrote, pagesNote(html, sum, out))
	}
	if len(wrote) > 0 {
		fmt.Fprintf(w, "\nwrote %s\n", strings.Join(wrote, ", "))
	}
	return err
}

// pagesNote is what the run says of the HTML it wrote: the index, how
// many cell pages, and why some runs have none.
func pagesNote(html *reports.HTMLResult, sum *reports.Summary, out string) string {
	note := fmt.Sprintf("%s (+%d cell pages, rendered in %s", html.Index, len(html.Pages), html.Elapsed.Round(time.Millisecond))
	if dropped := sum.DroppedHistories(); html.Unpaged > 0 && dropped > 0 {
		note += fmt.Sprintf("; %d met runs without one, %d of whose histories were not kept: --keep-histories", html.Unpaged, dropped)
	} else if html.Unpaged > 0 {
		note += fmt.Sprintf("; %d met runs without one: lockchaos report --all-pages %s", html.Unpaged, out)
	}
	return note + ")"
}
