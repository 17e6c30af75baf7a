package postgres

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Role and Database are the superuser role and the database every node
// has (trust authentication: no password).
const (
	Role     = "lockchaos"
	Database = "lockchaos"
)

// singleUserSQL shapes the template cluster; single-user mode runs one
// statement per line.
const singleUserSQL = "ALTER DATABASE postgres RENAME TO " + Database + ";\n" +
	"UPDATE pg_database SET datistemplate = false WHERE datname = 'template0';\n" +
	"DROP DATABASE template0;\n"

// templates are the clusters initdb makes, once per harness process and
// set of binaries (initdb takes ~1 s here; copying its ~20 MB on tmpfs
// a few tens of ms), each node's data folder being a copy of one. A
// failure is kept: every later node gets the same error.
var templates = struct {
	sync.Mutex
	byBin map[string]*templateOnce
}{byBin: map[string]*templateOnce{}}

type templateOnce struct {
	once sync.Once
	dir  string
	err  error
}

// templateDir returns the template cluster's data folder for the binaries
// in bin, made on first use; cred is who runs the server (nil: us).
func templateDir(bin string, cred *syscall.Credential) (string, error) {
	templates.Lock()
	t := templates.byBin[bin]
	if t == nil {
		t = &templateOnce{}
		templates.byBin[bin] = t
	}
	templates.Unlock()
	t.once.Do(func() { t.dir, t.err = makeTemplate(bin, cred) })
	return t.dir, t.err
}

func makeTemplate(bin string, cred *syscall.Credential) (string, error) {
	parent, err := parentDir()
	if err != nil {
		return "", fmt.Errorf("postgres: run folder: %w", err)
	}
	dir, err := os.MkdirTemp(parent, "template-")
	if err != nil {
		return "", fmt.Errorf("postgres: template folder: %w", err)
	}
	if err := chown(dir, cred); err != nil {
		return "", err
	}
	data := filepath.Join(dir, "data")
	// 1 MB WAL segments: the default 16 MB one would be most of what each
	// node copies.
	if err := runTool(bin, "initdb", cred, nil, "-D", data, "-U", Role, "--auth=trust",
		"--no-sync", "--no-instructions", "-E", "UTF8", "--locale=C", "--wal-segsize=1"); err != nil {
		return "", err
	}
	// Single-user mode, no server, ports or sockets: the postgres database
	// becomes lockchaos (renamed, not created: one database fewer to copy
	// per node), and template0, which only CREATE DATABASE ... TEMPLATE
	// template0 uses, goes. template1 stays, so CREATE DATABASE works.
	if err := runTool(bin, "postgres", cred, strings.NewReader(singleUserSQL), "--single", "-D", data,
		"-c", "fsync=off", "template1"); err != nil {
		return "", err
	}
	return data, nil
}

// runTool runs one of the PostgreSQL binaries to its end, its output in
// the error when it fails.
func runTool(bin, name string, cred *syscall.Credential, stdin io.Reader, args ...string) error {
	cmd := exec.Command(filepath.Join(bin, name), args...)
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &out, &out
	cmd.Env = serverEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("postgres: %s %s: %w\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return nil
}

// serverEnv is the environment the server runs in: ours without the PG*
// variables (a PGDATA or PGPORT of the user's must not steer it) and with
// the C locale.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") && !strings.HasPrefix(kv, "LC_") && !strings.HasPrefix(kv, "LANG") {
			env = append(env, kv)
		}
	}
	return append(env, "LC_ALL=C")
}

// chown gives path to the server's user (a no-op when cred is nil).
func chown(path string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	if err := os.Lchown(path, int(cred.Uid), int(cred.Gid)); err != nil {
		return fmt.Errorf("postgres: give %s to uid %d: %w", path, cred.Uid, err)
	}
	return nil
}

// copyTree copies the template cluster src to dst (which must not exist),
// keeping modes and giving everything to the server's user.
func copyTree(src, dst string, cred *syscall.Credential) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			err = os.Mkdir(to, info.Mode().Perm())
		case d.Type()&fs.ModeSymlink != 0:
			var target string
			if target, err = os.Readlink(path); err == nil {
				err = os.Symlink(target, to)
			}
		default:
			err = copyFile(path, to, info.Mode().Perm())
		}
		if err != nil {
			return err
		}
		return chown(to, cred)
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
