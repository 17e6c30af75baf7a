package reports

import "path/filepath"

// ReadDirs reads the summary.json of each results directory, in order
// (the shards of one run for Merge, two runs for Compare).
func ReadDirs(dirs []string) ([]*Summary, error) {
	sums := make([]*Summary, 0, len(dirs))
	for _, d := range dirs {
		s, err := ReadJSON(filepath.Join(d, "summary.json"))
		if err != nil {
			return nil, err
		}
		sums = append(sums, s)
	}
	return sums, nil
}
