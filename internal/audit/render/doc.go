// Package render writes the reports and evidence of package audit for
// people: Write writes a report in one of its Formats (aligned text for a
// terminal, JSON, CSV for a spreadsheet, one self-contained HTML page
// with charts), TableDetail the text with each row's detail, and
// EvidenceHTML the page of one crawler's evidence that a site sends the
// crawler's operator.
//
// Every value from the records is made safe where it is shown: control
// characters escaped in text (words.Clean), formulas neutralised in CSV,
// and the HTML written by html/template, with no script, no element or
// style rule that loads anything, and nothing from a record that can become
// markup. The pages are laid out for 800 px and wider; the tests check
// both in headless Chromium when it is installed.
package render
