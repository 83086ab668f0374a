// Package verdictpage renders the verdict page: for a range and an
// installation, the "done" reading as a yes or no with its reasons, the
// turns by primary cause over time, the causes implicated, the most recent
// turns with their verdict, link, route, evidence and the take readings
// behind each underrun, and the lost-link status changes.
//
// The page is one self-contained HTML document: no script, no external
// style sheet, font or image; its charts are inline SVG, each with a table
// that says the same in text; its own Content-Security-Policy forbids
// fetching anything. The verdicts exporter serves it from the verdicts it
// keeps (components/verdictexporter), and `percause lines --html` writes it
// as one file for a day's log. Both render what the verdict spans say
// (internal/page/dayreport); nothing here reads the rules again.
package verdictpage
