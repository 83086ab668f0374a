package poolsim

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// MaxSeconds bounds any time given to the model (a day).
const MaxSeconds = 86400

// ParseSeconds parses a non-negative number of seconds ("26", "40.4") to the
// millisecond, the model's resolution.
func ParseSeconds(s string) (time.Duration, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is not a number of seconds", s)
	}
	if f < 0 || f > MaxSeconds {
		return 0, fmt.Errorf("%q is outside 0..%d seconds", s, MaxSeconds)
	}
	return time.Duration(math.Round(f*1000)) * time.Millisecond, nil
}

// MaxTakes bounds how many takes a case may have.
const MaxTakes = 1000

// ParseTakes parses take stream lengths in seconds, comma-separated
// ("14,19,24,30"). Every length must be positive.
func ParseTakes(s string) ([]time.Duration, error) {
	parts := strings.Split(s, ",")
	if len(parts) > MaxTakes {
		return nil, fmt.Errorf("%d takes, at most %d", len(parts), MaxTakes)
	}
	var (
		out  []time.Duration
		errs []error
	)
	for i, p := range parts {
		d, err := ParseSeconds(p)
		if err == nil && d <= 0 {
			err = fmt.Errorf("%q: a take lasts more than 0 ms", p)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("take %d: %w", i+1, err))
			continue
		}
		out = append(out, d)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}
