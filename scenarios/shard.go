package scenarios

import (
	"fmt"
	"strconv"
)

// ShardFromEnv reads the shard ("i/n", for Shard) the CI system or orchestrator already
// assigned: GitLab's parallel jobs (CI_NODE_INDEX, 1-based, and
// CI_NODE_TOTAL), or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX,
// 0-based, with the total in LOCKCHAOS_SHARD_TOTAL, which the Job's
// manifest sets to its completions). It returns "" when none is set, and
// says which variables it used. Half a pair, or a value that is not a
// shard, is an error naming the variables: a job that silently ran every
// cell (or none) would pass its CI gate for the wrong reason.
func ShardFromEnv(getenv func(string) string) (shard, from string, err error) {
	if i, n := getenv("CI_NODE_INDEX"), getenv("CI_NODE_TOTAL"); i != "" || n != "" {
		const from = "CI_NODE_INDEX/CI_NODE_TOTAL"
		idx, total, err := envShard("CI_NODE_INDEX", i, "CI_NODE_TOTAL", n, 1)
		if err != nil {
			return "", "", err
		}
		return fmt.Sprintf("%d/%d", idx, total), from, nil
	}
	if i, n := getenv("JOB_COMPLETION_INDEX"), getenv("LOCKCHAOS_SHARD_TOTAL"); i != "" || n != "" {
		idx, total, err := envShard("JOB_COMPLETION_INDEX", i, "LOCKCHAOS_SHARD_TOTAL", n, 0)
		if err != nil {
			return "", "", err
		}
		return fmt.Sprintf("%d/%d", idx+1, total), "JOB_COMPLETION_INDEX/LOCKCHAOS_SHARD_TOTAL", nil
	}
	return "", "", nil
}

// envShard reads an index variable (counted from base) and a total one:
// both set, whole numbers, the index in base..total-1+base.
func envShard(iName, i, nName, n string, base int) (idx, total int, err error) {
	switch {
	case i == "":
		return 0, 0, fmt.Errorf("%s=%q is set without %s: set both (or neither, or --shard i/n)", nName, n, iName)
	case n == "":
		hint := ""
		if nName == "LOCKCHAOS_SHARD_TOTAL" {
			hint = " (the Job's completions)"
		}
		return 0, 0, fmt.Errorf("%s=%q needs %s%s to make a shard: set both (or --shard i/n)", iName, i, nName, hint)
	}
	idx, err1 := strconv.Atoi(i)
	total, err2 := strconv.Atoi(n)
	switch {
	case err2 != nil || total < 1:
		return 0, 0, fmt.Errorf("%s=%q: want a whole number of shards, 1 or more", nName, n)
	case err1 != nil || idx < base || idx > total-1+base:
		return 0, 0, fmt.Errorf("%s=%q: want a whole number in %d..%d (%s=%d, counted from %d)", iName, i, base, total-1+base,
			nName, total, base)
	}
	return idx, total, nil
}
