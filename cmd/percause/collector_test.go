package main

import "testing"

func TestHasConfigFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"validate"}, false},
		{[]string{"--config", "x.yaml"}, true},
		{[]string{"validate", "--config=x.yaml"}, true},
		{[]string{"-config", "x.yaml"}, true},
		{[]string{"--feature-gates", "a"}, false},
		{[]string{"--", "--config", "x"}, false},
	} {
		if got := hasConfigFlag(tc.args); got != tc.want {
			t.Errorf("hasConfigFlag(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}
