package load

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/percause/percause/instr/semconv"
)

// Counts is what a Prometheus endpoint says of one counter: its total by
// the value of one label, and how many series hold it.
type Counts struct {
	By     map[string]float64
	Series int
}

// Scrape reads metric from a Prometheus text endpoint and sums it by the
// value of label.
func Scrape(ctx context.Context, url, metric, label string) (Counts, error) {
	c := Counts{By: map[string]float64{}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return c, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return c, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return c, fmt.Errorf("load: scrape %s: %s", url, resp.Status)
	}
	return c, parseCounts(resp.Body, metric, label, &c)
}

func parseCounts(r io.Reader, metric, label string, c *Counts) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, metric) {
			continue
		}
		rest := line[len(metric):]
		if rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue // another metric sharing the prefix
		}
		value := ""
		if rest[0] == '{' {
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				continue
			}
			labels := rest[1:end]
			value = labelValue(labels, label)
			rest = rest[end+1:]
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		c.By[value] += v
		c.Series++
	}
	return sc.Err()
}

func labelValue(labels, name string) string {
	for _, kv := range strings.Split(labels, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.TrimSpace(k) == name {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// causeLabel is the Prometheus label the verdict counters carry the cause in.
var causeLabel = strings.ReplaceAll(semconv.VerdictCause, ".", "_")

// Turns reads percause_turns_total by cause.
func Turns(ctx context.Context, promURL string) (Counts, error) {
	return Scrape(ctx, promURL, semconv.PromTurnsTotal, causeLabel)
}

// Diff lists the causes whose count differs from want, as "cause: got N,
// want M", sorted; empty when every count is exact.
func Diff(got map[string]float64, base map[string]float64, want Tally) []string {
	var out []string
	seen := map[string]bool{}
	for c, w := range want {
		seen[c] = true
		if g := got[c] - base[c]; g != float64(w) {
			out = append(out, fmt.Sprintf("%s: counted %v, sent %d", c, g, w))
		}
	}
	for c, g := range got {
		if !seen[c] && g-base[c] != 0 {
			out = append(out, fmt.Sprintf("%s: counted %v, sent 0", c, g-base[c]))
		}
	}
	sort.Strings(out)
	return out
}

// recheck is how long after the counts were first exact they are read
// again: a verdict counted twice would show by then.
const recheck = time.Second

// WaitCounted polls the endpoint until percause_turns_total, less base,
// equals want for every cause, or timeout passes, and once exact reads it
// again a moment later (a late double count shows there). It returns the
// last reading and the differences left (none: exact).
func WaitCounted(ctx context.Context, promURL string, base map[string]float64, want Tally, timeout time.Duration) (Counts, []string, error) {
	c, diff, _, err := waitCounted(ctx, promURL, base, want, timeout)
	return c, diff, err
}

// waitCounted is WaitCounted that also says when the counts were first
// exact (zero when never).
func waitCounted(ctx context.Context, promURL string, base map[string]float64, want Tally, timeout time.Duration) (Counts, []string, time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		c, err := Turns(ctx, promURL)
		if err == nil {
			diff := Diff(c.By, base, want)
			if len(diff) == 0 {
				exact := time.Now()
				select {
				case <-ctx.Done():
					return c, nil, exact, ctx.Err()
				case <-time.After(recheck):
				}
				if c, err = Turns(ctx, promURL); err != nil {
					return c, nil, exact, err
				}
				return c, Diff(c.By, base, want), exact, nil
			}
			if time.Now().After(deadline) {
				return c, diff, time.Time{}, nil
			}
		} else if time.Now().After(deadline) {
			return c, nil, time.Time{}, err
		}
		select {
		case <-ctx.Done():
			return c, nil, time.Time{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Usage is a process's CPU time and memory, read from /proc.
type Usage struct {
	CPU time.Duration // user + system (to the nanosecond where the kernel tells it)
	RSS int64         // resident set, bytes
	HWM int64         // peak resident set, bytes
}

// processCPU is process pid's CPU time, user and system, of every thread
// (those that have ended too), to the nanosecond: the kernel's clock of
// that process (clock_getcpuclockid's, CPUCLOCK_SCHED). /proc/PID/stat
// counts it in ticks of 10 ms, too coarse for a side-by-side round that
// costs a collector a few hundred milliseconds.
func processCPU(pid int) (time.Duration, error) {
	clock := int32(^pid)<<3 | 2 // MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)
	var ts unix.Timespec
	if err := unix.ClockGettime(clock, &ts); err != nil {
		return 0, err
	}
	return time.Duration(ts.Nano()), nil
}

// ProcUsage reads the CPU time and resident memory of process pid (Linux).
func ProcUsage(pid int) (Usage, error) {
	var u Usage
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, err
	}
	// The command name is in parentheses and may hold spaces: fields
	// start after its closing one.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return u, fmt.Errorf("load: /proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return u, fmt.Errorf("load: /proc/%d/stat: unexpected format", pid)
	}
	if cpu, err := processCPU(pid); err == nil {
		u.CPU = cpu
	} else {
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		const ticks = 100 // USER_HZ on Linux
		u.CPU = time.Duration(utime+stime) * time.Second / ticks
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb := func() int64 {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n << 10
		}
		switch k {
		case "VmRSS":
			u.RSS = kb()
		case "VmHWM":
			u.HWM = kb()
		}
	}
	return u, nil
}
