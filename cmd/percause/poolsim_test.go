package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPoolsimDefaultIsTheReferenceTable(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "internal", "command", "poolsim", "testdata", "reference.golden"))
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := runPoolsim(nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if out.String() != string(want) {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestPoolsimFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--pools", "one"}, "one pool, a healthy engine   checks 12, missed  1 | one miss: 27.4 s  verdict: never\n"},
		{[]string{"--pools", "two"}, "two pools, a healthy engine  checks 15, missed  0 | one miss: never   verdict: never\n"},
		{[]string{"--engine", "gone"}, "two pools, the engine gone   checks  6, missed  6 | one miss:  5.0 s  verdict: 21.0 s\n"},
		{[]string{"--pools", "one", "--takes", "1,1,1,1"}, "one pool, a healthy engine   checks 15, missed  0 | one miss: never   verdict: never\n"},
		{[]string{"--pools", "one", "--takes", "14,19,24,30,30"}, "one pool, a healthy engine   checks 11, missed  2 | one miss: 27.4 s  verdict: never\n"},
		{[]string{"--engine", "gone", "--words-until", "20"}, "two pools, the engine gone   checks  6, missed  6 | one miss:  5.0 s  verdict: 37.0 s\n"},
		{[]string{"--pools", "one", "--words-until", "10"}, "one pool, a healthy engine   checks 15, missed  0 | one miss: never   verdict: never\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := runPoolsim(tt.args, &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			if out.String() != tt.want {
				t.Errorf("\n got %q\nwant %q", out.String(), tt.want)
			}
		})
	}
}

func TestPoolsimBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--pools", "three"}, "--pools: want one or two"},
		{[]string{"--engine", "down"}, "--engine: want up or gone"},
		{[]string{"--takes", "14,x"}, "--takes: take 2"},
		{[]string{"--takes", "0"}, "take 1"},
		{[]string{"--words-until", "-3"}, "--words-until"},
		{[]string{"extra"}, "unexpected argument"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := runPoolsim(tt.args, &out, &errOut); code != 2 {
				t.Fatalf("exit %d, want 2", code)
			}
			if !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", errOut.String(), tt.want)
			}
		})
	}
}
