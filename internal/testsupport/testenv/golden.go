package testenv

import "strings"

// FirstDifference is the first line (counted from 1) where want and got
// differ, with that line of each ("" past its end); 0 when they are the
// same: what a test of a generated, committed document names.
func FirstDifference(want, got []byte) (line int, inWant, inGot string) {
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return i + 1, w, g
		}
	}
	return 0, "", ""
}
