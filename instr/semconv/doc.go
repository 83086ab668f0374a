// Package semconv is the one source of truth for every name percause puts on
// the wire: span names, attribute keys, event names, metric names, units and
// the bounded value sets (causes, lanes, live-object kinds, listen stages).
//
// It is the leaf of the module: every other package may import it and it
// imports nothing of ours. The phone, the engine, the verdict processor and the
// dashboards all read their names from here, and docs/semconv.md is generated
// from the Registry so a client in another language (Swift on the phone) can
// emit exactly the same names. A test keeps that page in step with this code.
//
// Where an OpenTelemetry semantic convention exists it is used as is
// (network.connection.type, service.instance.id, app.installation.id, http.*);
// everything else lives under the pippa. namespace (the system observed) or the
// percause. namespace (what this project derives).
package semconv
