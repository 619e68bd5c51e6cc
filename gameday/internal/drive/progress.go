package drive

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// liveCounts counts outcomes as shoppers finish, for the progress line.
// Arrivals need no counting: they follow the plan, so the number due by
// now is read off the schedule.
type liveCounts struct {
	mu       sync.Mutex
	n        map[string]int
	schedule []time.Duration // arrival offsets from the start, in order
	start    time.Time
}

// arrivals is the number of arrivals the plan has made due by now.
func (l *liveCounts) arrivals() int {
	elapsed := time.Since(l.start)
	return sort.Search(len(l.schedule), func(i int) bool { return l.schedule[i] > elapsed })
}

func (l *liveCounts) add(outcome string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == nil {
		l.n = map[string]int{}
	}
	l.n[outcome]++
}

func (l *liveCounts) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := make([]string, 0, len(l.n))
	for k := range l.n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys)+1)
	parts = append(parts, fmt.Sprintf("arrivals=%d", l.arrivals()))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, l.n[k]))
	}
	return strings.Join(parts, " ")
}

// liveProgress prints a line a second while the load runs.
func (d *drill) liveProgress(live *liveCounts, probe *breakerProbe, start time.Time) (stop func()) {
	if d.Config.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	wrote := false
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				states := probe.states()
				var bs []string
				for _, dep := range []string{"payment", "inventory", "sessions"} {
					if s, ok := states[dep]; ok {
						bs = append(bs, dep+":"+s)
					}
				}
				line := fmt.Sprintf("gameday: %s load %5.1fs faults=[%s] breakers=[%s] %s", d.Scenario.Name, time.Since(start).Seconds(),
					strings.Join(d.Inj.Active(), ","), strings.Join(bs, " "), live)
				if d.Config.ProgressLive {
					fmt.Fprintf(d.Config.Progress, "\r\033[K%s", line)
					wrote = true
				} else {
					fmt.Fprintln(d.Config.Progress, line)
				}
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
		if wrote {
			fmt.Fprintln(d.Config.Progress) // leave the last state on screen
		}
	}
}
