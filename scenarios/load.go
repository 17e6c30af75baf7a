package scenarios

import (
	"fmt"
	"io"
	"os"

	"github.com/lockchaos/lockchaos/drivers"
	"github.com/lockchaos/lockchaos/lockimpl"
)

// LoadCatalog is the built-in catalog with the scenario files at paths
// applied, and every driver lock (from the files, and lockDrivers, each
// NAME=COMMAND) registered: what `lockchaos run`, `list` and `margins`
// read before they select cells. An error about a file names FILE:LINE;
// one about a path or a driver is a FieldError ("scenarios-file",
// "lock-driver").
func LoadCatalog(paths, lockDrivers []string) ([]Scenario, error) {
	for _, v := range lockDrivers {
		d, err := drivers.Parse(v)
		if err != nil {
			return nil, err
		}
		if err := lockimpl.Register(d.Spec()); err != nil {
			return nil, &FieldError{Field: "lock-driver", Value: d.Name, Want: err.Error(), Err: err}
		}
	}
	catalog := Catalog()
	var loaded []*File
	for _, p := range paths {
		file, err := ReadFile(p)
		if err != nil {
			return nil, err
		}
		if err := file.Clash(loaded); err != nil {
			return nil, err
		}
		loaded = append(loaded, file)
		if err := file.Register(); err != nil {
			return nil, err
		}
		if catalog, err = file.Apply(catalog); err != nil {
			return nil, err
		}
	}
	return catalog, nil
}

// MaxFileSize bounds what ReadFile reads: a scenarios file is a few
// kilobytes of YAML, and /dev/zero or a multi-gigabyte log named by
// mistake must not fill the memory. A variable for the tests.
var MaxFileSize int64 = 16 << 20

// ReadFile reads and loads the scenarios file at path, at most
// MaxFileSize bytes of it.
func ReadFile(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, &FieldError{Field: "scenarios-file", Value: path, Want: err.Error(), Err: err}
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, MaxFileSize+1))
	switch {
	case err != nil:
		return nil, &FieldError{Field: "scenarios-file", Value: path, Want: err.Error(), Err: err}
	case int64(len(b)) > MaxFileSize:
		return nil, &FieldError{Field: "scenarios-file", Value: path, Err: ErrInvalid,
			Want: fmt.Sprintf("larger than %s (a scenarios file is a few KB of YAML)", sizeText(MaxFileSize))}
	}
	return Load(b, path)
}

// sizeText is n bytes for people: "16 MiB", "512 KiB", "100 bytes".
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
