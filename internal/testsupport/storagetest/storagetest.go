// Package storagetest starts a real file_storage extension for a
// component's test, and the host that offers it to the component.
package storagetest

import (
	"context"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
)

// Host is a host with one storage extension, Ext, under ID.
type Host struct {
	component.Host
	ID  component.ID
	Ext component.Component
}

// GetExtensions offers Ext under ID.
func (h *Host) GetExtensions() map[component.ID]component.Component {
	return map[component.ID]component.Component{h.ID: h.Ext}
}

// FileStorage starts file_storage on dir and returns its host. The test
// shuts it down (Ext.Shutdown) when it wants; a test that stands for a
// crash may never.
func FileStorage(t testing.TB, dir string) *Host {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = dir
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	return &Host{Host: componenttest.NewNopHost(), ID: component.NewID(f.Type()), Ext: ext}
}
