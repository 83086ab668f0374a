// Package deploy holds the container build of the percause collector
// (Dockerfile) and the tests of the repository's docker-compose.yml: that it
// loads with the compose-spec parser, that every file it mounts exists, that
// every port is published on loopback by default, that no secret is written
// in it, and that the collector configuration it mounts passes
// `percause collector validate`.
//
// Docker itself does not run here; what can be checked without it is checked.
package deploy
