package testenv

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// PrometheusServer starts a real Prometheus server (Debian's prometheus
// package: scripts/setup.sh installs it) on a free loopback port, scraping
// targets (host:port, their /metrics) every second, and returns its base
// URL. It is stopped and its data removed when the test ends.
func PrometheusServer(tb testing.TB, targets ...string) string {
	tb.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		tb.Fatalf("no prometheus; the README's test command installs it")
	}
	dir := tb.TempDir()
	quoted := make([]string, len(targets))
	for i, t := range targets {
		quoted[i] = strconv.Quote(t)
	}
	cfg := fmt.Sprintf("global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n  - job_name: drill\n    static_configs: [{targets: [%s]}]\n", strings.Join(quoted, ", "))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		tb.Fatal(err)
	}
	port := freePort(tb)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	done, log := serve(tb, exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn"))
	url := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(url + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return url
			}
		}
		select {
		case <-done:
			tb.Fatalf("prometheus exited:\n%s", log.String())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("prometheus not ready within 30s:\n%s", log.String())
		}
	}
}
