package sharedstorage

import (
	"testing"
)

// engineUnderTest is the engine start gives the extension ("": the
// default), unless the test's own settings name one:
// TestContractOnEveryEngine sets it.
var engineUnderTest string

// TestContractOnEveryEngine runs the extension's tests that hold for any
// engine (extension_test.go, on the default, the log, as top-level tests)
// on the other engines: the namespaces, staging and its timer, reads
// after staging, walks, a restart, clients at once.
func TestContractOnEveryEngine(t *testing.T) {
	tests := []struct {
		name string
		test func(*testing.T)
	}{
		{"NamespacesKeptApart", TestNamespacesKeptApart},
		{"StagedFlushedWhenNobodyBatches", TestStagedFlushedWhenNobodyBatches},
		{"ReadsSeeWhatWasStagedBefore", TestReadsSeeWhatWasStagedBefore},
		{"WalkPerNamespace", TestWalkPerNamespace},
		{"RestartKeepsEverything", TestRestartKeepsEverything},
		{"ConcurrentClients", TestConcurrentClients},
	}
	for _, engine := range []string{EnginePebble, EngineBbolt} {
		t.Run(engine, func(t *testing.T) {
			engineUnderTest = engine
			t.Cleanup(func() { engineUnderTest = "" })
			for _, tt := range tests {
				t.Run(tt.name, tt.test)
			}
		})
	}
}

// TestValidateTakesEveryEngine: the three engines validate; another does
// not (TestValidateNamesEachProblem).
func TestValidateTakesEveryEngine(t *testing.T) {
	for _, engine := range []string{EngineLog, EngineBbolt, EnginePebble} {
		cfg := createDefaultConfig().(*Config)
		cfg.Directory, cfg.Engine = t.TempDir(), engine
		if err := cfg.Validate(); err != nil {
			t.Errorf("engine %q: %v", engine, err)
		}
	}
}
