package verdictprocessor

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/collector/client"

	"github.com/percause/percause/processors/internal/launches"
)

// sendByLaunch (launch_metadata_key) sends each launch's decisions in a
// delivery of their own, under client metadata naming the launch, so the
// next hop can key them by launch (the Kafka exporter's
// traces.message_key_from_metadata_key: every turn of a launch on one
// partition of the turns topic). The deliveries go at once, side by side,
// at most maxLaunchDeliveries at a time: with an exporter that answers
// once the broker acknowledged (no queue), one after another would cost a
// cycle a round trip per launch. Each is settled on its own answer: one
// launch's refusal holds that launch's turns for the retry and no other's.
func (p *verdictProcessor) sendByLaunch(ctx context.Context, ds []decision) ([]decision, error) {
	groups := groupByLaunch(ds)
	errs := make([]error, len(groups))
	sem := make(chan struct{}, maxLaunchDeliveries)
	var wg sync.WaitGroup
	for i := range groups {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			g := &groups[i]
			md := client.NewMetadata(map[string][]string{p.cfg.LaunchMetadataKey: {g.key}})
			err := p.next.ConsumeTraces(client.NewContext(ctx, client.Info{Metadata: md}), p.mode.write(p, g.ds))
			p.settle(ctx, g.ds, err)
			errs[i] = err
		}()
	}
	wg.Wait()
	var accepted []decision
	for i := range groups {
		if errs[i] == nil {
			accepted = append(accepted, groups[i].ds...)
		}
	}
	return accepted, errors.Join(errs...)
}

// maxLaunchDeliveries bounds the deliveries of one cycle in flight at once.
const maxLaunchDeliveries = 16

// launchGroup is one launch's decisions of a cycle, and the key naming it.
type launchGroup struct {
	key string
	ds  []decision
}

// groupByLaunch splits ds by launch, in the order each launch first comes.
// A turn that names no launch goes under the empty key: the exporter sends
// it without a record key, and no later stage reads it with others.
func groupByLaunch(ds []decision) []launchGroup {
	var groups []launchGroup
	at := make(map[string]int)
	for i := range ds {
		k := launchKeyOf(&ds[i])
		j, ok := at[k]
		if !ok {
			j = len(groups)
			at[k] = j
			groups = append(groups, launchGroup{key: k})
		}
		groups[j].ds = append(groups[j].ds, ds[i])
	}
	return groups
}

// launchKeyOf is the key naming a decision's launch: the installation and
// the service.instance.id, joined. Two launches whose joined names are
// alike share a key and a partition, which costs nothing: the key only
// places the turns, and each turn still names its own launch.
func launchKeyOf(d *decision) string {
	k, ok := launches.KeyOf(d.resource)
	if !ok {
		return ""
	}
	return k.Installation + "/" + k.Instance
}
