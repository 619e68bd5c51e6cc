package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// healthCmd checks that a server answers GET URL with a 2xx within the
// timeout. The images have no shell and no curl, so their health checks
// are this command.
func healthCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("health", stderr)
	timeout := fs.Duration("timeout", 2*time.Second, "how long to wait for the answer")
	if err := parseFlags2(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("health: want one URL, such as http://127.0.0.1:8080/healthz")
	}
	url := fs.Arg(0)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return usagef("health: %v", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("health: %s answered %s", url, resp.Status)
	}
	fmt.Fprintf(stdout, "%s: %s\n", url, resp.Status)
	return nil
}
