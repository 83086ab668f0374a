// Package sharedstorage is a collector storage extension (type
// "shared_storage") whose clients, one per component and storage name,
// each see keys of their own but live in one database, so one transaction
// can store what several components changed.
//
// The database is kept by one of three engines (Config.Engine): by
// default an append-only log of the transactions with a snapshot, the keys
// held in memory (logstore.go); or one Pebble database (pebblestore.go);
// or contrib's file_storage, one bbolt database opened through one
// file_storage client. A new log or Pebble database begins with the keys
// the engine before it kept. A client's Batch commits its operations
// together with everything any client staged (Stager) since the last
// transaction; staged operations that no batch carries within stage_flush
// are committed by the extension itself. A client whose component kept its
// data in file_storage before finds it, read in once at its first use.
// README.md draws the commit path: who stages, who commits, in what order,
// and what a failure undoes.
package sharedstorage
