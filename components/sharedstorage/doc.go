// Package sharedstorage is a collector storage extension (type
// "shared_storage") whose clients, one per component and storage name,
// each see keys of their own but live in one database, so one transaction
// can store what several components changed.
//
// It is contrib's file_storage underneath: one bbolt database in the
// configured directory, opened through one file_storage client. A
// client's Batch commits its operations together with everything any
// client staged (Stager) since the last transaction; staged operations
// that no batch carries within stage_flush are committed by the extension
// itself. A client whose component kept its data in file_storage before
// finds it, read in once at its first use.
package sharedstorage
