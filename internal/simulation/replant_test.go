package simulation

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestHolePatchesApply: each hole of holes/ (the fixes the simulation
// must find undone, which holes/replant.sh plants and explores) still
// applies to the tree, so `make simulate-holes` measures what it says.
func TestHolePatchesApply(t *testing.T) {
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip("not in a git checkout: the patches are applied to one")
	}
	patches, err := filepath.Glob("holes/*.patch")
	if err != nil || len(patches) == 0 {
		t.Fatalf("no hole patches found (%v)", err)
	}
	for _, p := range patches {
		abs, _ := filepath.Abs(p)
		cmd := exec.Command("git", "apply", "--check", abs)
		cmd.Dir = string(root[:len(root)-1])
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s no longer applies: %v\n%s", p, err, out)
		}
	}
}
