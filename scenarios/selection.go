package scenarios

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lockchaos/lockchaos/service"
)

// Selection names the cells a run takes: the catalog with the scenario
// files and driver locks that add to it, the scenarios and locks chosen
// (all when a list is empty) and the expectations kept (all when empty).
// Each field is named as `lockchaos run`'s flag that gives it.
type Selection struct {
	Files, LockDrivers []string
	Scenarios, Locks   []string
	Expects            []string
	// Services keeps the cells whose lock runs on one of these services
	// (service.Redis, service.Postgres; all when empty).
	Services []string
}

// Cells are the catalog's cells s names (LoadCatalog, Select,
// KeepExpected): a lock nobody declares is lockimpl.ErrUnknownLock, an
// option out of its range a FieldError.
func (s Selection) Cells() ([]Cell, error) {
	catalog, err := LoadCatalog(s.Files, s.LockDrivers)
	if err != nil {
		return nil, err
	}
	cells, err := Select(catalog, s.Scenarios, s.Locks)
	if err != nil {
		return nil, err
	}
	if cells, err = KeepServices(cells, s.Services); err != nil {
		return nil, err
	}
	return KeepExpected(cells, s.Expects)
}

// KeepServices keeps the cells whose lock runs on one of services (all
// when empty); an unknown service is a FieldError of "service" listing
// the valid ones.
func KeepServices(cells []Cell, services []string) ([]Cell, error) {
	if len(services) == 0 {
		return cells, nil
	}
	want := map[service.Name]bool{}
	for _, s := range services {
		n := service.Name(s)
		if err := n.Validate(); err != nil || n == "" {
			valid := make([]string, len(service.Names))
			for i, v := range service.Names {
				valid[i] = string(v)
			}
			return nil, &FieldError{Field: "service", Value: fmt.Sprintf("%q", s),
				Want: "valid: " + strings.Join(valid, ", "), Err: ErrInvalid}
		}
		want[n] = true
	}
	var out []Cell
	for _, c := range cells {
		if want[c.Lock.Service.Or()] {
			out = append(out, c)
		}
	}
	return out, nil
}

// ShardOf keeps the cells of shard "i/n" (Shard); a shard not of that
// form is a FieldError of "shard".
func ShardOf(cells []Cell, shard string) ([]Cell, error) {
	a, b, ok := strings.Cut(shard, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return nil, &FieldError{Field: "shard", Value: fmt.Sprintf("%q", shard), Want: "want i/n, e.g. 1/4", Err: ErrInvalidShard}
	}
	return Shard(cells, i, n)
}
