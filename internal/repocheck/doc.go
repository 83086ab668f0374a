// Package repocheck holds tests of the repository as a whole rather than of
// one package: the dependency direction of docs/architecture.md ("Which part
// may import which", TestDependencyDirection), its layout table
// (TestLayoutListsEveryPackage), and the files the code and the docs cite:
// none outside the repository (TestNoCitationOutsideTheRepository), every
// document and decision under docs/ (TestCitedDocsExist), and every other
// file, a .go file as much as a document, by its path from the root or, in
// a Go comment or a package's README, alone beside it (TestCitedFilesExist);
// and the index of the decision notes, a row with its status for every note
// (TestDecisionIndexListsEveryNote). It has no code of its own.
package repocheck
