// Package verdict is percause's verdict model, the one place a voice turn
// is read and judged:
//
//   - the readings: what the rules need of a voice.turn, voice.unit and
//     tts.take span, typed, checked and bounded (ReadTurn, ReadUnit,
//     ReadTake), and a trace's readings gathered as its spans arrive
//     (Trace);
//   - the rules: a table, one row per rule, its order their precedence
//     (table.go), and the decision they make of one trace (Decide), reading
//     across turns what a holder kept of the launch (Earlier) when the turn
//     carries no history of its own;
//   - the percause.verdict span: its writer (Append) and its one reader
//     (FromSpan, Parse, EachCounted), which the verdict processor, the
//     verdicts exporter, the verdict count connector, the page, the day
//     report, the live check, the load tool and the lab all use;
//   - the joined form: a trace's readings written back as spans under the
//     phone's resource (AppendTrace), which the readers read back into the
//     same readings, for the stage of a scale-out that decides by launch.
//
// It imports only pdata and instr/semconv: whoever holds turns (the
// verdict processor in a collector, a test) decides when to decide; this
// package says what.
package verdict
