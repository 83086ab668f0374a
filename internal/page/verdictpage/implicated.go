package verdictpage

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/page/dayreport"
)

// The chart of causes implicated.

type bars struct {
	Rows    []barRow
	Total   int
	Summary string
}

type barRow struct {
	Cause string
	N     int
	// BarW is the bar's length, percent of the longest.
	BarW float64
}

func buildImplicated(turns []dayreport.JudgedTurn) bars {
	counts := map[string]int{}
	for _, t := range turns {
		for i, c := range t.Causes {
			if !slices.Contains(t.Causes[:i], c) {
				counts[c]++
			}
		}
	}
	b := bars{Total: len(turns)}
	maxN := 0
	for _, n := range counts {
		maxN = max(maxN, n)
	}
	var parts []string
	for _, c := range semconv.Causes {
		n := counts[c]
		if n == 0 {
			continue
		}
		b.Rows = append(b.Rows, barRow{Cause: c, N: n, BarW: round1(math.Max(100*float64(n)/float64(maxN), 0.5))})
		parts = append(parts, fmt.Sprintf("%s %d", c, n))
	}
	if len(parts) == 0 {
		b.Summary = "No turns in this range."
	} else {
		b.Summary = fmt.Sprintf("Of %d turns, implicated: %s.", len(turns), strings.Join(parts, ", "))
	}
	return b
}
