// Package repocheck holds tests of the repository as a whole rather than of
// one package: the dependency direction of docs/architecture.md ("Which part
// may import which", TestDependencyDirection) and the documents the code and
// the docs cite (TestNoCitationOutsideTheRepository, TestCitedDocsExist). It
// has no code of its own.
package repocheck
