package choose

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/lockchaos/lockchaos/internal/safefile"
)

// WriteJSON writes choose.json (docs/schema/choose.v1.json).
func (t *Table) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(t)
}

// WriteFiles writes choose.json, choose.md, choose.html (the table and
// every plot, self-contained) and each plot as an SVG under dir, each
// file whole or not at all and never through a link planted in dir. It
// returns the files written.
func (t *Table) WriteFiles(dir string) ([]string, error) {
	var wrote []string
	write := func(name string, fill func(io.Writer) error) error {
		p := filepath.Join(dir, name)
		if err := safefile.WriteAtomic(p, fill); err != nil {
			return err
		}
		wrote = append(wrote, p)
		return nil
	}
	if err := write("choose.json", t.WriteJSON); err != nil {
		return wrote, err
	}
	if err := write("choose.md", func(w io.Writer) error {
		fmt.Fprintf(w, "# Which lock to use\n\n")
		t.WriteMarkdown(w)
		return nil
	}); err != nil {
		return wrote, err
	}
	if err := write("choose.html", func(w io.Writer) error { t.WriteHTML(w); return nil }); err != nil {
		return wrote, err
	}
	for _, p := range t.plots() {
		if err := write(p.file, func(w io.Writer) error { _, err := io.WriteString(w, p.svg); return err }); err != nil {
			return wrote, err
		}
	}
	return wrote, nil
}
