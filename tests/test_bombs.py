"""Decompression and size bombs (issue #20): each generated at test time in ``tmp_path`` (tests/bombs.py, never
committed), refused by ``load_table`` with a DataError that says why, fast and in bounded memory.

Speed claims live in bench/; here the bounds are loose (10 s, 200 MB of Python allocations) and the times are
printed beside the time to load a small valid file in the same process (run with ``-s`` to see them).
Before the checks were moved ahead of parsing, the 172 MB-of-XML workbook took 97 s and 1.1 GB and 10^7 tiny
rows 24 s and 1.9 GB (accepted); now each refusal takes milliseconds.
"""
from __future__ import annotations

import io
import struct
import time
import tracemalloc
import zipfile

import numpy as np
import pytest

from bombs import BOMBS, xlsx_from_rows
from engine.data import DataError, load_table, readers
from engine.data.containers import MAX_XLSX_MEMBERS, check_xlsx_container, sheet_cells_over
from workbooks import workbook_bytes

TIME_BOUND_S = 10.0
MEMORY_BOUND_MB = 200


def _peer_seconds(tmp_path) -> float:
    """Time to load a small valid CSV (200 x 20) in this process: the yardstick printed beside each bomb."""
    p = tmp_path / "peer.csv"
    rng = np.random.default_rng(0)
    p.write_text(",".join(f"c{j}" for j in range(20)) + "\n"
                 + "".join(",".join(f"{v:.6f}" for v in r) + "\n" for r in rng.random((200, 20))))
    t0 = time.perf_counter()
    assert load_table(p).shape == (200, 20)
    return time.perf_counter() - t0


def _refusal(path):
    """Load ``path``; the DataError, seconds and peak traced MB."""
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(DataError) as info:
            load_table(path)
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    return info.value, seconds, peak


@pytest.mark.parametrize("fname", sorted(BOMBS))
def test_bomb_is_refused_fast_with_the_reason(fname, tmp_path):
    make, words = BOMBS[fname]
    path = tmp_path / fname
    path.write_bytes(make())
    assert path.stat().st_size < readers.MAX_UPLOAD_MB * 2**20  # it passes the upload limit
    peer = _peer_seconds(tmp_path)
    err, seconds, peak = _refusal(path)
    msg = str(err)
    print(f"\n{fname}: {path.stat().st_size / 1e6:.2f} MB refused in {seconds:.3f} s "
          f"(a 200 x 20 CSV loads in {peer:.3f} s), peak traced {peak:.0f} MB: {msg}")
    assert err.file == fname and msg.startswith(f"{fname}: ")
    for w in words:
        assert w in msg, (w, msg)
    assert seconds < TIME_BOUND_S
    assert peak < MEMORY_BOUND_MB


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_xlsx_bombs_say_decompression_bomb_or_size(tmp_path):
    for fname in ("sheet_172mb.xlsx", "cells_16m.xlsx"):
        with pytest.raises(DataError, match="decompression bomb"):
            load_table(BOMBS[fname][0](), fname)
    with pytest.raises(DataError, match="unpacks to 512 MB; the limit is 400 MB for a sheet"):
        load_table(BOMBS["zip_bomb.xlsx"][0](), "z.xlsx")


# ------------------------------------------------------------------------------ the ZIP directory checks

def _zip(members: dict, compression=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for n, b in members.items():
            zf.writestr(n, b)
    return buf.getvalue()


def test_too_many_members_is_refused_from_the_end_record():
    data = _zip({"[Content_Types].xml": b"<Types/>", **{f"m{i}": b"" for i in range(MAX_XLSX_MEMBERS + 1)}},
                zipfile.ZIP_STORED)
    with pytest.raises(DataError, match=f"states {MAX_XLSX_MEMBERS + 2:,} members"):
        check_xlsx_container(data, "many.xlsx")


def test_zip64_member_count_is_read(tmp_path):
    """Over 65,535 members the count sits in the ZIP64 end record; it must still be read (not the 0xFFFF mark)."""
    data = _zip({f"{i}": b"" for i in range(70_000)}, zipfile.ZIP_STORED)
    t0 = time.perf_counter()
    with pytest.raises(DataError, match="states 70,000 members"):
        load_table(data, "zip64.xlsx")
    print(f"\n70,000-member archive ({len(data) / 1e6:.1f} MB) refused in {time.perf_counter() - t0:.3f} s")


def test_other_parts_have_their_own_smaller_limit():
    big = b"<sst>" + b"<si><t>a</t></si>" * (65 * 2**20 // 17) + b"</sst>"  # 65 MB, compresses ~1000x
    data = _zip({"[Content_Types].xml": b"<Types/>", "xl/sharedStrings.xml": big})
    with pytest.raises(DataError, match="'xl/sharedStrings.xml' of the workbook unpacks to 65 MB; the limit is 64"):
        check_xlsx_container(data, "strings.xlsx")


def test_archive_without_part_list_or_with_a_duplicated_member_is_not_a_workbook():
    with pytest.raises(DataError, match=r"not a valid \.xlsx workbook: it is a ZIP archive without"):
        load_table(_zip({"readme.txt": b"hello"}), "plain.xlsx")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf, pytest.warns(UserWarning, match="Duplicate name"):
        zf.writestr("[Content_Types].xml", b"<Types/>")
        zf.writestr("[Content_Types].xml", b"<Types/>")
    with pytest.raises(DataError, match="'\\[Content_Types\\].xml' appears twice"):
        load_table(buf.getvalue(), "twice.xlsx")


def test_a_directory_that_understates_a_size_cannot_unpack_more(tmp_path):
    """The checks trust the stated sizes: zipfile stops a member at its stated size (and then fails its CRC),
    so a 50 MB sheet stated as 1,000 bytes is a damaged file, not a bomb."""
    data = bytearray(xlsx_from_rows(["a"], "<row><c><v>1</v></c></row>", 2_000_000, level=1))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        real = zf.getinfo("xl/worksheets/sheet1.xml")
    assert real.file_size > 50_000_000
    patched = 0
    for sig in (b"PK\x03\x04", b"PK\x01\x02"):  # local header, central directory: 4-byte or ZIP64 8-byte size
        i = 0
        while (i := data.find(sig, i)) >= 0:
            for fmt in ("<Q", "<I"):
                j = data.find(struct.pack(fmt, real.file_size), i, i + 400)
                if j > 0:
                    struct.pack_into(fmt, data, j, 1000)
                    patched += 1
                    break
            i += 4
    assert patched == 2
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        assert zf.getinfo("xl/worksheets/sheet1.xml").file_size == 1000
    t0 = time.perf_counter()
    with pytest.raises(DataError, match=r"stated\.xlsx: the (sheet|workbook) cannot be (read|opened)"):
        load_table(bytes(data), "stated.xlsx")
    assert time.perf_counter() - t0 < TIME_BOUND_S


def test_damaged_sheet_xml_is_a_data_error():
    """The sheet is parsed while its rows are read (not on opening): an XML error there is still a DataError."""
    data = xlsx_from_rows(["a"], "<row><c><v>1</v></c></row>" * 1000 + "<row><c><v>2</v></row>", 1)
    with pytest.raises(DataError, match=r"broken\.xlsx: the sheet cannot be read \(ParseError: mismatched tag"):
        load_table(data, "broken.xlsx")


def test_sheet_without_a_stated_size_is_parsed_once(monkeypatch):
    """openpyxl parsed a sheet without <dimension> whole on opening, to find its size; the reader skips that."""
    calls = []
    real = readers._UnsizedSheet._cells_by_row

    def counting(self, *args, **kwargs):
        calls.append(self.title)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(readers._UnsizedSheet, "_cells_by_row", counting)
    opened = []
    monkeypatch.setattr(readers._UnsizedSheet, "_get_source", lambda self: opened.append(1) or
                        readers.ReadOnlyWorksheet._get_source(self))
    data = xlsx_from_rows(["a", "b"], "<row><c><v>1</v></c><c><v>2</v></c></row>", 10)
    assert b"<dimension" not in zipfile.ZipFile(io.BytesIO(data)).read("xl/worksheets/sheet1.xml")
    assert load_table(data, "unsized.xlsx").shape == (10, 2)
    assert calls == ["Sheet1"] and len(opened) == 1


def test_real_workbooks_pass_the_container_checks():
    """An all-zero sheet (the most compressible a real writer makes, ~13x) and a small table load."""
    rows = [[f"c{j}" for j in range(300)]] + [[0] * 300 for _ in range(400)]
    data = workbook_bytes({"Zeros": rows})
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        info = zf.getinfo("xl/worksheets/sheet1.xml")
    assert info.file_size > 2**20 and info.file_size / info.compress_size > 5  # the ratio check applies to it
    df = load_table(data, "zeros.xlsx")
    assert df.shape == (400, 300) and not df.to_numpy().any()


# ------------------------------------------------------------------------------ streamed sheet, budgets per row

def test_sheet_cells_are_counted_in_the_xml_before_the_parse(monkeypatch):
    rows = [[f"c{j}" for j in range(10)]] + [list(range(10)) for _ in range(300)]
    data = workbook_bytes({"S": rows})
    assert sheet_cells_over(data, "xl/worksheets/sheet1.xml", 10**9) == 3010
    assert sheet_cells_over(data, "xl/worksheets/sheet1.xml", 100) > 100
    monkeypatch.setattr(readers, "MAX_CELLS", 3009)
    parsed = []
    monkeypatch.setattr(readers, "_sheet_cells", lambda *a: parsed.append(1))
    with pytest.raises(DataError, match="cells.xlsx: the sheet holds more than 3,009 cells .counted in its XML"):
        load_table(data, "cells.xlsx")
    assert not parsed


def test_cell_count_across_chunks_and_with_a_namespace_prefix():
    """Exact over a sheet of several 4 MB chunks (no cell counted twice at a boundary), and for a sheet
    whose elements carry a prefix (<x:c>), as some writers make them."""
    data = xlsx_from_rows(["a", "b", "c"], "<row>" + "<c><v>7</v></c><c/><c s=\"1\"><v>8</v></c>" + "</row>", 400_000)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.getinfo("xl/worksheets/sheet1.xml").file_size > 3 * (4 << 20)
    assert sheet_cells_over(data, "xl/worksheets/sheet1.xml", 10**9) == 3 + 3 * 400_000
    xml = ('<x:worksheet xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><x:sheetData>'
           + '<x:row r="1"><x:c r="A1"><x:v>1</x:v></x:c><x:c r="B1"><x:v>2</x:v></x:c></x:row>' * 5
           + "<x:cols/></x:sheetData></x:worksheet>")
    prefixed = _zip({"[Content_Types].xml": b"<Types/>", "xl/worksheets/sheet1.xml": xml.encode()})
    assert sheet_cells_over(prefixed, "xl/worksheets/sheet1.xml", 10**9) == 10


def test_sheet_cell_budget_is_checked_while_streaming(monkeypatch):
    """The same budget in the row loop (here with the XML count switched off)."""
    rows = [[f"c{j}" for j in range(10)]] + [list(range(10)) for _ in range(300)]
    data = workbook_bytes({"S": rows})
    monkeypatch.setattr(readers, "MAX_CELLS", 1000)
    monkeypatch.setattr(readers, "sheet_cells_over", lambda *a: 0)
    with pytest.raises(DataError, match=r"more than 1,000 cells .at sheet row 10\d\b"):
        load_table(data, "cells.xlsx")
    monkeypatch.setattr(readers, "MAX_CELLS", 10_000_000)
    monkeypatch.setattr(readers, "MAX_ROWS", 100)
    with pytest.raises(DataError, match="more than 100 data rows .at sheet row 102"):
        load_table(data, "rows.xlsx")


def test_duplicate_header_is_refused_before_the_rows_are_read(monkeypatch):
    """The cell budget would stop the read at row ~100: the duplicate name is reported first, from the header."""
    rows = [["a", "b", "a"]] + [[1, 2, 3] for _ in range(1000)]
    monkeypatch.setattr(readers, "MAX_CELLS", 300)
    monkeypatch.setattr(readers, "sheet_cells_over", lambda *a: 0)  # the row loop alone
    with pytest.raises(DataError, match=r"duplicate column names: 'a' \(columns 1 and 3\)"):
        load_table(workbook_bytes({"S": rows}), "dup.xlsx")
    with pytest.raises(DataError, match=r"duplicate column names: 'a' \(columns 1 and 3\)"):
        load_table(("a,b,a\n" + "1,2,3\n" * 1000).encode(), "dup.csv")


def test_stated_sheet_size_is_ignored():
    """A sheet stating A1:XFD1048576 made openpyxl pad every row to 16,384 cells: 100,000 one-cell rows were
    1.6 billion cells to convert. The streamed reader ignores the stated size."""
    rows = "".join(f"<row><c><v>{i}</v></c></row>" for i in range(100_000))
    data = xlsx_from_rows(["x"], "", 0)
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for info in src.infolist():
            body = src.read(info)
            if info.filename == "xl/worksheets/sheet1.xml":
                body = body.replace(b"<sheetData>", b'<dimension ref="A1:XFD1048576"/><sheetData>')
                body = body.replace(b"</sheetData>", rows.encode() + b"</sheetData>")
            zf.writestr(info.filename, body)
    t0 = time.perf_counter()
    df = load_table(buf.getvalue(), "stated.xlsx")
    seconds = time.perf_counter() - t0
    print(f"\n100,000 rows stated as A1:XFD1048576 loaded in {seconds:.2f} s")
    assert df.shape == (100_000, 1)
    np.testing.assert_array_equal(df["x"].to_numpy(), np.arange(100_000))
    assert seconds < TIME_BOUND_S


# ------------------------------------------------------------------------------ text: lines counted on the bytes

def test_line_limit_counts_lines_not_rows(monkeypatch):
    monkeypatch.setattr(readers, "MAX_ROWS", 5)
    assert load_table(b"a\n1\n2\n3\n4\n5\n", "five.csv").shape == (5, 1)
    assert load_table(b"a\n1\n2\n3\n4\n5", "five_no_eol.csv").shape == (5, 1)
    with pytest.raises(DataError, match="six.csv: the file has 7 lines; the limit is 6 lines"):
        load_table(b"a\n1\n2\n3\n4\n5\n6\n", "six.csv")


def test_long_line_names_its_line_and_width(monkeypatch):
    monkeypatch.setattr(readers, "MAX_LINE_MB", 1)
    line = ";".join(["1.5"] * 300_000)  # 1.1 MB
    with pytest.raises(DataError) as info:
        load_table(f"a;b\n1;2\n{line}\n".encode(), "wide.csv")
    assert info.value.line == 3
    assert "line 3 is 1.1 MB long with about 300,000 columns if semicolon-separated" in str(info.value)
    ok = ",".join(["1234567890123.5"] * 60_000)  # 0.96 MB: under the limit, read as usual
    df = load_table(f"{','.join(f'c{j}' for j in range(60_000))}\n{ok}\n".encode(), "ok.csv")
    assert df.shape == (1, 60_000) and df.iloc[0, -1] == 1234567890123.5


def test_utf16_and_old_mac_line_breaks_are_counted(monkeypatch):
    monkeypatch.setattr(readers, "MAX_ROWS", 2)
    text = "a\tb\r\n1\t2\r\n3\t4\r\n"
    assert load_table(text.encode("utf-16"), "u16.txt").shape == (2, 2)
    with pytest.raises(DataError, match="4 lines"):
        load_table((text + "5\t6\r\n").encode("utf-16"), "u16.txt")
    assert load_table(b"a,b\r1,2\r3,4\r", "mac.csv").shape == (2, 2)
    with pytest.raises(DataError, match="4 lines"):
        load_table(b"a,b\r1,2\r3,4\r5,6\r", "mac.csv")


def test_text_cell_budget_at_the_header_and_while_reading(monkeypatch):
    monkeypatch.setattr(readers, "MAX_CELLS", 1000)
    body = "a,b,c,d\n" + "1,2,3,4\n" * 300
    with pytest.raises(DataError, match="cells.csv: 300 lines below a header of 4 columns make 1,200 cells; the limit"):
        load_table(body.encode(), "cells.csv")  # before any data row is read
    assert load_table(("a,b,c,d\n" + "1,2,3,4\n" * 250).encode(), "ok.csv").shape == (250, 4)
    # with quotes a line may not be one record: the budget is then counted row by row, and still holds
    quoted = 'a,b,c,d\n"x",2,3,4\n' + "1,2,3,4\n" * 299
    with pytest.raises(DataError, match=r"quoted.csv: more than 1,000 cells \(251\+ rows x 4 columns\)"):
        load_table(quoted.encode(), "quoted.csv")
    # blank lines are not records either: not refused at the header, 250 rows fit
    assert load_table(("a,b,c,d\n" + "1,2,3,4\n\n" * 250).encode(), "blank.csv").shape == (250, 4)


def test_header_width_is_refused_before_the_rows():
    """A header of 10^6 one-letter names is under the line limit (2 MB): the column cap refuses it."""
    n = 1_000_000
    data = (",".join("x" * n) + "\n" + ",".join("1" * n) + "\n").encode()
    t0 = time.perf_counter()
    with pytest.raises(DataError, match="narrow.csv: the header has 1,000,000 columns; the limit is 100,000"):
        load_table(data, "narrow.csv")
    assert time.perf_counter() - t0 < TIME_BOUND_S


@pytest.fixture(scope="module")
def job_runner():
    from ui.runtime.jobs import JobRunner

    return JobRunner(max_jobs=1)


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
@pytest.mark.parametrize("fname", sorted(BOMBS))
def test_bomb_uploaded_through_the_job_runner_is_answered_within_its_budgets(fname, job_runner):
    """As the app reads an upload: ``parse_upload`` in a worker (600 MB and 30 s budgets). Each bomb comes back as
    its DataError's message (file and reason), not as a budget stop: answered within its time budget, counted from
    the worker's start (the start-up, slow on a loaded machine, has its own allowance)."""
    from ui.runtime.jobs import parse_upload

    make, words = BOMBS[fname]
    job = job_runner.submit(parse_upload, make(), fname, memory_mb=600, seconds=30, label=f"Reading {fname}")
    df, problem, raw = job.result(timeout=150)
    seconds = time.monotonic() - job.started
    print(f"\n{fname}: answered in {seconds:.2f} s after its worker started: {problem and problem[0]}")
    assert df is None and raw is None and problem is not None
    assert problem[0].startswith(f"{fname}: ")
    for w in words:
        assert w in problem[0], (w, problem[0])
    assert seconds < 30
