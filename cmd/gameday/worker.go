package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/gameday-dev/gameday/gameday/fleet"
)

// workerCmd is one shard of a sale's load: it calls in at the
// coordinator ("gameday run -shards N"), sends its part and streams its
// shoppers' records back (docs/scale.md). Its shard comes from -shard, or
// from the engine that started it: $GAMEDAY_SHARD, a Kubernetes Indexed
// Job's $JOB_COMPLETION_INDEX, or a Swarm replicated job's task slot in
// $GAMEDAY_SHARD_SLOT; without any, the coordinator gives it a free one.
// The run's token is read from $GAMEDAY_SHARD_TOKEN, or from the file
// $GAMEDAY_SHARD_TOKEN_FILE names (a Docker or Kubernetes secret), never
// from the command line.
func workerCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("worker", stderr)
	describe(fs, "gameday worker -coordinator URL [flags]", `
Sends one shard of a drill's load: it calls in at the coordinator of
"gameday run -shards N", sends its part of the sale and streams its
shoppers' records back (docs/scale.md). With -workers local the runner
starts its workers itself; with -workers remote, start them elsewhere. Its
shard is -shard, else $GAMEDAY_SHARD, $JOB_COMPLETION_INDEX (a Kubernetes
Indexed Job) or $GAMEDAY_SHARD_SLOT (a Swarm replicated job's task slot),
else any free one. The run's token is read from $GAMEDAY_SHARD_TOKEN, or
from the file $GAMEDAY_SHARD_TOKEN_FILE names (a Docker or Kubernetes
secret), never from the command line.`)
	coordinator := fs.String("coordinator", os.Getenv("GAMEDAY_COORDINATOR"), "the coordinator's URL, as gameday run printed it (default $GAMEDAY_COORDINATOR)")
	shard := fs.Int("shard", -1, "this worker's shard, from 0 (default: $GAMEDAY_SHARD, $JOB_COMPLETION_INDEX, $GAMEDAY_SHARD_SLOT (a Swarm replicated job's task slot, from 0), else any free one)")
	host := fs.String("host", "", "this worker's name in the run's record (default: the host name)")
	if err := parseFlags2(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("worker: no arguments wanted, got %q", fs.Args())
	}
	if *coordinator == "" {
		return usagef("worker: -coordinator (or $GAMEDAY_COORDINATOR) is required")
	}
	token := os.Getenv(fleet.TokenEnv)
	if f := os.Getenv(fleet.TokenEnv + "_FILE"); token == "" && f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return usagef("worker: $%s_FILE: %v", fleet.TokenEnv, err)
		}
		token = strings.TrimSpace(string(b))
	}
	if token == "" {
		return usagef("worker: $%s (or $%s_FILE) is required: the run's token, never given on the command line", fleet.TokenEnv, fleet.TokenEnv)
	}
	k, err := shardFromEnv(*shard)
	if err != nil {
		return usageError{err}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return fleet.Work(ctx, fleet.WorkerOptions{Coordinator: *coordinator, Token: token, Shard: k, Host: *host, Log: stderr})
}

// shardFromEnv is the worker's shard: the flag's, else the engine's.
func shardFromEnv(flagged int) (int, error) {
	if flagged >= 0 {
		return flagged, nil
	}
	for _, name := range []string{"GAMEDAY_SHARD", "JOB_COMPLETION_INDEX", "GAMEDAY_SHARD_SLOT"} {
		v := os.Getenv(name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if name == "GAMEDAY_SHARD_SLOT" && err != nil {
			// A replicated job's tasks have slots 0 to N-1, but Swarm
			// renders slot 0 as the node's ID (it takes 0 for "no slot").
			// Were two tasks without a number, the coordinator would
			// refuse the second: "shard 0 is taken".
			n, err = 0, nil
		}
		if err != nil || n < 0 {
			return 0, fmt.Errorf("worker: $%s=%q: want a shard number", name, v)
		}
		return n, nil
	}
	return -1, nil
}
