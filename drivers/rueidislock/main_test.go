package main

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDriverWaitsForARedisThatComesUpLate: a first connection that fails
// (here: nothing listens yet; in CI, a loaded machine stretching rueidis's
// connection setup past the cell's call timeout) is retried until Redis
// answers, and the driver then says hello and serves a lock, instead of
// failing the cell before its lock was ever tested.
func TestDriverWaitsForARedisThatComesUpLate(t *testing.T) {
	server, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed (apt-get install redis-server)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "rueidislock-driver")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	// Until Redis comes up, a listener takes the driver's connections and
	// closes each at once: the first connections fail, and the test sees
	// how many did instead of sleeping and assuming several.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	attempts := make(chan struct{}, 100)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
			attempts <- struct{}{}
		}
	}()

	driver := exec.Command(bin)
	driver.Env = append(os.Environ(), "LOCKCHAOS_ADDRS="+addr, "LOCKCHAOS_TTL_MS=1000", "LOCKCHAOS_CALL_TIMEOUT_MS=100")
	stdin, _ := driver.StdinPipe()
	stdout, _ := driver.StdoutPipe()
	var stderr strings.Builder
	driver.Stderr = &stderr
	if err := driver.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); driver.Process.Kill(); driver.Wait() }()

	for i := range 3 { // several failed attempts
		select {
		case <-attempts:
		case <-time.After(10 * time.Second):
			l.Close()
			t.Fatalf("%d connection attempts in 10 s, want 3; stderr: %s", i, stderr.String())
		}
	}
	l.Close() // refused from now until Redis listens
	_, port, _ := net.SplitHostPort(addr)
	redis := exec.Command(server, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	if err := redis.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { redis.Process.Kill(); redis.Wait() }()

	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(what string) string {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the driver exited before %s; stderr: %s", what, stderr.String())
			}
			return l
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s within 10 s; stderr: %s", what, stderr.String())
		}
		return ""
	}
	if hello := next("hello"); !strings.Contains(hello, `"hello":"lockchaos-driver"`) {
		t.Fatalf("first line %q, want the hello", hello)
	}
	io.WriteString(stdin, `{"id":1,"op":"acquire","key":"late:1"}`+"\n")
	if answer := next("the acquire's answer"); !strings.Contains(answer, `"result":"ok"`) {
		t.Fatalf("acquire answered %q, want ok", answer)
	}
}
