// Package testenv starts the real parts that end-to-end tests need: the
// percause binary (built once per test run), free loopback ports, and child
// processes that are stopped by their process id when the test ends.
//
// It is for tests only; nothing outside _test.go files imports it.
package testenv
