package testenv

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // database/sql driver "mysql"
)

// MySQL is a MariaDB server (MySQL's protocol) a test started on a free
// loopback port, in a directory of its own, removed when the test ends.
type MySQL struct {
	Addr string // host:port
	DSN  string // go-sql-driver/mysql: root, no password, database gameday
}

// MySQLServer starts a real MariaDB server (Debian's mariadb-server:
// scripts/setup.sh installs it), with a database "gameday", and stops it
// when the test ends. Its grant tables are skipped: it listens on loopback
// for this test only.
func MySQLServer(tb testing.TB) *MySQL {
	tb.Helper()
	server, err := exec.LookPath("mariadbd")
	if err != nil {
		if server, err = exec.LookPath("/usr/sbin/mariadbd"); err != nil {
			tb.Fatalf("no MariaDB server (mariadbd); the README's test command installs mariadb-server")
		}
	}
	install, err := exec.LookPath("mariadb-install-db")
	if err != nil {
		tb.Fatalf("no mariadb-install-db; the README's test command installs mariadb-server")
	}
	dir, err := os.MkdirTemp("", "gameday-mysql-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	data := filepath.Join(dir, "data")
	user := []string{}
	if os.Geteuid() == 0 {
		user = []string{"--user=root"}
	}
	var out bytes.Buffer
	init := exec.Command(install, append([]string{"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal", "--skip-test-db"}, user...)...)
	init.Stdout, init.Stderr = &out, &out
	if err := init.Run(); err != nil {
		tb.Fatalf("mariadb-install-db: %v\n%s", err, out.String())
	}
	port := freePort(tb)
	done, log := serve(tb, exec.Command(server, append([]string{"--no-defaults", "--datadir=" + data, "--socket=" + filepath.Join(dir, "sock"),
		"--pid-file=" + filepath.Join(dir, "pid"), "--port=" + strconv.Itoa(port), "--bind-address=127.0.0.1",
		"--skip-grant-tables", "--skip-name-resolve", "--innodb-flush-log-at-trx-commit=0", "--innodb-buffer-pool-size=16M"}, user...)...))
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-done:
			tb.Fatalf("mariadbd exited:\n%s", log.String())
		case <-ctx.Done():
			tb.Fatalf("mariadbd not listening within 30s: %v\n%s", errors.Join(err, ctx.Err()), log.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	db, err := sql.Open("mysql", "root@tcp("+addr+")/")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE gameday"); err != nil {
		tb.Fatalf("create the database: %v\n%s", err, log.String())
	}
	return &MySQL{Addr: addr, DSN: "root@tcp(" + addr + ")/gameday?parseTime=true"}
}
