package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Postgres is a PostgreSQL server a test started on a free loopback port,
// in a directory of its own, removed when the test ends.
type Postgres struct {
	Addr string // host:port
	DSN  string // a URL for pgx: user gameday, database postgres, trust auth
}

// PostgresServer starts a real PostgreSQL server (Debian's postgresql
// package: scripts/setup.sh installs it) and stops it when the test ends.
// As root it runs as the postgres user, since PostgreSQL refuses root.
func PostgresServer(tb testing.TB) *Postgres {
	tb.Helper()
	bin, err := postgresBin()
	if err != nil {
		tb.Fatalf("%v; the README's test command installs postgresql", err)
	}
	dir, err := os.MkdirTemp("", "gameday-pg-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	data := filepath.Join(dir, "data")
	cred, err := runAs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	run := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		// Killed with the test binary, however it ends: a binary killed
		// (a timeout, a lane stopped) runs no Cleanup, and a server it
		// started lived on after a run of the test command.
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
		cmd.Dir = dir
		return cmd
	}
	var out bytes.Buffer
	initdb := run("initdb", "-D", data, "-U", "gameday", "--auth=trust", "-E", "UTF8", "--no-sync")
	initdb.Stdout, initdb.Stderr = &out, &out
	if err := initdb.Run(); err != nil {
		tb.Fatalf("initdb: %v\n%s", err, out.String())
	}
	port := freePort(tb)
	done, log := serve(tb, run("postgres", "-D", data, "-k", dir, "-p", strconv.Itoa(port), "-h", "127.0.0.1",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200"))
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		ready := run("pg_isready", "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "gameday")
		if ready.Run() == nil {
			break
		}
		select {
		case <-done:
			tb.Fatalf("postgres exited:\n%s", log.String())
		case <-ctx.Done():
			tb.Fatalf("postgres not ready within 30s:\n%s", log.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	return &Postgres{Addr: addr, DSN: "postgres://gameday@" + addr + "/postgres?sslmode=disable"}
}

// postgresBin finds the newest installed PostgreSQL's bin directory.
func postgresBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(dirs) == 0 {
		return "", errors.New("no PostgreSQL server (/usr/lib/postgresql/*/bin/postgres)")
	}
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(dirs[i]))))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(dirs[j]))))
		return vi > vj
	})
	return filepath.Dir(dirs[0]), nil
}

// runAs is who the server runs as: this user, or postgres when this is
// root (the directory is then given to postgres).
func runAs(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, and there is no postgres user to run PostgreSQL as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}
