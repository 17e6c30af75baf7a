package safefile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/internal/safefile"
)

// protected is a fresh output root, released with the test, and a victim
// file outside it that no write may reach.
func protected(t *testing.T) (root, victim string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	release, err := safefile.Protect(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	victim = filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, victim
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func intact(t *testing.T, victim string) {
	t.Helper()
	if b, err := os.ReadFile(victim); err != nil || string(b) != "precious\n" {
		t.Fatalf("the link's target was written: %q, %v", b, err)
	}
}

// regular checks path is a regular file (not a link) holding want.
func regular(t *testing.T, path, want string) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("%s: %v, mode %v; want a regular file", path, err, fi)
	}
	if b, _ := os.ReadFile(path); string(b) != want {
		t.Fatalf("%s holds %q, want %q", path, b, want)
	}
}

func write(t *testing.T, f *os.File, err error, text string) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// The reproduction: a link planted where the history goes.
func TestCreateReplacesALinkAtTheFileNeverItsTarget(t *testing.T) {
	root, victim := protected(t)
	path := filepath.Join(root, "baseline", "token", "history.jsonl")
	symlink(t, victim, path)
	f, err := safefile.Create(path)
	write(t, f, err, "history\n")
	intact(t, victim)
	regular(t, path, "history\n")
}

// A directory link below the root (o/baseline -> /etc) is refused, with
// the link and its target named, and nothing is made where it points.
func TestCreateRefusesALinkedDirectory(t *testing.T) {
	root, _ := protected(t)
	elsewhere := t.TempDir()
	symlink(t, elsewhere, filepath.Join(root, "baseline"))
	_, err := safefile.Create(filepath.Join(root, "baseline", "token", "history.jsonl"))
	if !errors.Is(err, safefile.ErrLink) {
		t.Fatalf("err %v, want ErrLink", err)
	}
	for _, want := range []string{filepath.Join(root, "baseline"), "to " + elsewhere, "remove the link"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("made %v in the link's target", entries)
	}
	if err := safefile.MkdirAll(filepath.Join(root, "baseline", "token")); !errors.Is(err, safefile.ErrLink) {
		t.Fatalf("MkdirAll: %v, want ErrLink", err)
	}
	err = safefile.WriteAtomic(filepath.Join(root, "baseline", "x.html"), func(io.Writer) error { return nil })
	if !errors.Is(err, safefile.ErrLink) {
		t.Fatalf("WriteAtomic: %v, want ErrLink", err)
	}
}

// A link deeper down is refused as well, and a file where a directory
// should be is named as such.
func TestEveryElementBelowTheRootIsChecked(t *testing.T) {
	root, _ := protected(t)
	symlink(t, t.TempDir(), filepath.Join(root, "a", "b", "c"))
	if _, err := safefile.Create(filepath.Join(root, "a", "b", "c", "d", "f")); !errors.Is(err, safefile.ErrLink) {
		t.Fatalf("err %v, want ErrLink", err)
	}
	if err := os.WriteFile(filepath.Join(root, "plain"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := safefile.Create(filepath.Join(root, "plain", "f")); !errors.Is(err, safefile.ErrNotDir) {
		t.Fatalf("err %v, want ErrNotDir", err)
	}
}

// The root itself may be a link: the user named it.
func TestTheRootMayBeALink(t *testing.T) {
	target := t.TempDir()
	root := filepath.Join(t.TempDir(), "out")
	symlink(t, target, root)
	release, err := safefile.Protect(root)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	f, err := safefile.Create(filepath.Join(root, "s", "l", "h"))
	write(t, f, err, "x")
	regular(t, filepath.Join(target, "s", "l", "h"), "x")
}

func TestWriteAtomicReplacesALinkAndLeavesNoTemporary(t *testing.T) {
	root, victim := protected(t)
	path := filepath.Join(root, "summary.json")
	symlink(t, victim, path)
	if err := safefile.WriteAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "{}"); return err }); err != nil {
		t.Fatal(err)
	}
	intact(t, victim)
	regular(t, path, "{}")
	failed := errors.New("half written")
	if err := safefile.WriteAtomic(path, func(io.Writer) error { return failed }); !errors.Is(err, failed) {
		t.Fatalf("err %v, want the writer's", err)
	}
	regular(t, path, "{}")
	if entries, _ := os.ReadDir(root); len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}

// A directory where the file should be is an error, never a success.
func TestADirectoryWhereTheFileShouldBeIsAnError(t *testing.T) {
	root, _ := protected(t)
	path := filepath.Join(root, "summary.json")
	if err := os.MkdirAll(filepath.Join(path, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := safefile.WriteAtomic(path, func(io.Writer) error { return nil }); err == nil {
		t.Fatal("WriteAtomic over a directory succeeded")
	}
	if _, err := safefile.Create(path); err == nil {
		t.Fatal("Create over a directory succeeded")
	}
}

func TestAppendReplacesSymbolicAndHardLinks(t *testing.T) {
	root, victim := protected(t)
	path := filepath.Join(root, "found.yaml")
	symlink(t, victim, path)
	f, err := safefile.Append(path)
	write(t, f, err, "a\n")
	intact(t, victim)
	regular(t, path, "a\n")
	f, err = safefile.Append(path)
	write(t, f, err, "b\n")
	regular(t, path, "a\nb\n")

	hard := filepath.Join(root, "hard.yaml")
	if err := os.Link(victim, hard); err != nil {
		t.Skipf("no hard link here: %v", err)
	}
	f, err = safefile.Append(hard)
	write(t, f, err, "c\n")
	intact(t, victim)
	regular(t, hard, "c\n")
}

func TestRemoveNeverFollowsALinkedDirectory(t *testing.T) {
	root, victim := protected(t)
	symlink(t, filepath.Dir(victim), filepath.Join(root, "baseline"))
	err := safefile.Remove(filepath.Join(root, "baseline", filepath.Base(victim)))
	if !errors.Is(err, safefile.ErrLink) {
		t.Fatalf("err %v, want ErrLink", err)
	}
	intact(t, victim)
	missing := filepath.Join(root, "never", "made", "h.jsonl")
	if err := safefile.Remove(missing); err != nil {
		t.Fatalf("removing a file that is not there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "never")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Remove made a directory: %v", err)
	}
}

// Outside every root (a user's own test writing into its temp dir) the
// file's own name is still guarded.
func TestOutsideARootTheFileItselfIsGuarded(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "new", "h.jsonl")
	symlink(t, victim, path)
	f, err := safefile.Create(path)
	write(t, f, err, "h")
	intact(t, victim)
	regular(t, path, "h")
}

func TestReleaseEndsTheRoot(t *testing.T) {
	dir := t.TempDir()
	release, err := safefile.Protect(dir)
	if err != nil {
		t.Fatal(err)
	}
	symlink(t, t.TempDir(), filepath.Join(dir, "linked"))
	if err := safefile.MkdirAll(filepath.Join(dir, "linked", "x")); !errors.Is(err, safefile.ErrLink) {
		t.Fatalf("under the root: %v, want ErrLink", err)
	}
	release()
	if err := safefile.MkdirAll(filepath.Join(dir, "linked", "x")); err != nil {
		t.Fatalf("after release: %v", err)
	}
	if _, err := safefile.Protect(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a missing root was accepted")
	}
}
