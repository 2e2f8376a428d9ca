"""Data picker shared by all pages: a sample set or an upload, with a preview.

A bad upload shows the engine's message (file, row, column) and the previously selected
data stays selected: the valid choice lives in ``st.session_state["pl_dataset"]`` and is
only replaced by data that loaded cleanly.

The choice follows the user: the radio "Data source" starts on the origin of the stored choice (an upload
chosen on the home page is still the data on edPLS). A page that cannot use the stored choice says so and
works on its own first sample set without replacing the stored choice (until the user picks one there).

Missing values: a file refused only for empty / "n/a" cells in numeric columns shows the engine's refusal
and a checkbox "Drop rows with missing values (n rows)"; ticked, the rows are left out (their count and row
numbers shown) and the file is used. The choice is kept with the data set, so it follows it to other pages.
"""
from __future__ import annotations

from typing import Callable

import pandas as pd
import streamlit as st

from engine.data import MAX_UPLOAD_MB, DataError, check_usable, load_table, xlsx_sheet_names
from engine.data.catalog import load_sample, sample_sets
from engine.data.columns import drop_missing_rows
from engine.data.xy_files import join_xy, shared_columns
from ui.dataset import Dataset, still_using, store_dataset
from ui.jobs_view import JobWait
from ui.progress import session_scope
from ui.runtime import jobs
from ui.state import init_state
from ui.upload_read import PendingRead, cancel_read, drop_read, finish, read_kept, reading, start_read, try_load

SAMPLE, UPLOAD, TWO_FILES = "Sample data", "Upload a file", "X and Y as two files"


class _Cancelled(Exception):
    """The user stopped reading an upload (its Cancel button)."""


class _Waiting(JobWait):
    """``on_wait`` for reading ``name`` (``ui.jobs_view.JobWait``): after a second, its place in line (or the time
    it has run) and Cancel; ``clear()`` removes them."""

    def __init__(self, name: str, key: str, verdict: tuple, slot: str = "pl_dataset"):
        super().__init__(f"Reading {name}", f"{key}_cancel_read", on_click=_cancel_read, args=(key, verdict, slot))


def _cancel_read(key: str, verdict: tuple, slot: str) -> None:
    st.session_state[f"{key}_cancelled"] = verdict
    cancel_read(slot, verdict)


@st.cache_data(show_spinner=False, max_entries=16)
def _sheets(data: bytes, scope: str = "") -> list:
    """The sheet names of an uploaded workbook, cached per session (``scope``: ``ui.progress.session_scope``)."""
    return xlsx_sheet_names(data)


def _check(ds_or_df, name: str, kind: str | None, check: Callable | None) -> None:
    """The table must suit the page: ``check_usable`` for its kind, then the page's own ``check``."""
    df = ds_or_df.df if isinstance(ds_or_df, Dataset) else ds_or_df
    check_usable(df, name, kind)
    if check is not None:
        check(df, name)


def _usable_here(ds: Dataset, kind: str | None, check: Callable | None, key: str) -> str | None:
    """None when ``ds`` suits this page, else the reason (checked once per data set and page)."""
    if key not in ds.checks:
        try:
            _check(ds, ds.name, kind, check)
        except DataError as err:
            ds.checks[key] = str(err)
        else:
            ds.checks[key] = None
    return ds.checks[key]


@st.cache_data(show_spinner=False)
def _load_sample(key: str) -> pd.DataFrame:
    return load_sample(key)


MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024


class _ChooseSheet(Exception):
    """A workbook with several sheets and none chosen yet."""


def data_picker(kind: str | None = None, *, key: str = "data", slot: str = "pl_dataset",
                check: Callable | None = None, two_files: bool = False, large: bool = False,
                default_sample: str | None = None) -> Dataset | None:
    """Render the picker and return the selected data set (or None when none is valid yet).

    kind: restrict sample sets to one kind ("spectra", "timeseries", "two_views", "process");
    None offers all of them. An upload must also pass ``engine.data.check_usable`` for the kind
    and the page's ``check(df, name)`` (raising DataError) before it replaces the selection; a
    refused upload shows the engine's message and the previous data stay selected. A choice made
    on another page that does not suit this one is set aside with a message (and kept stored).
    large: also offer "Large data set on the server" (``ui.large_data``) when the operator set a data root; its
    Dataset has origin "server", ``large`` (its shape) and its first rows as ``df``.
    default_sample: the key of the sample set offered first when nothing suitable is chosen yet (else the
    registry's first of the kind).
    """
    from ui.large_data import LARGE, ORIGIN, large_available, large_choice

    init_state()
    explicit = st.session_state.pop(f"{key}_explicit", False)  # the user picked here (not a page default)
    pending = reading(slot)
    if pending is not None and not _uploaded_here(pending, key):
        _take_read(pending, key, slot)  # a file still being read when the user left the page it was uploaded on
        pending = None
    stored: Dataset | None = st.session_state.get(slot)
    current = _current_for_page(kind, check, key, slot)
    offer_large = large and large_available()
    if current is not None and current.origin == ORIGIN and not offer_large:
        current = None  # a large data set is fitted only where the page says it can
    set_aside = stored is not None and current is None
    source_key = f"{key}_source"
    sources = (SAMPLE, UPLOAD, TWO_FILES) if two_files else (SAMPLE, UPLOAD)
    sources += (LARGE,) if offer_large else ()
    if st.session_state.get(source_key) not in (None, *sources):
        del st.session_state[source_key]  # the data root went away
    if source_key not in st.session_state:  # a first visit (Streamlit drops a widget's state): follow the choice
        origin = SAMPLE if current is None or current.origin != "upload" else UPLOAD
        st.session_state[source_key] = TWO_FILES if origin == UPLOAD and current.files and two_files else origin
        if current is not None and current.origin == ORIGIN:
            st.session_state[source_key] = LARGE
    source = st.radio("Data source", sources, horizontal=True, key=source_key,
                      on_change=_mark_explicit, args=(key,))
    if pending is not None and source != UPLOAD:
        drop_read(slot)  # the user chose another source while the file was being read
    box_shown = False
    if source == LARGE:
        return large_choice(current, key, slot)  # its own preview (the first rows and the footers' shape)
    if source == SAMPLE:
        current = _sample_choice(kind, current, key, slot, store=explicit or not set_aside,
                                 default_sample=default_sample)
    elif source == TWO_FILES:
        current = _two_files_choice(kind, check, current, key, slot)
    else:
        current, box_shown = _upload_choice(kind, check, current, key, slot)
    if current is not None and current.raw is not None and not box_shown:
        current = _stored_missing_choice(current, key)
    if current is not None:
        _preview(current)
    return current


def _mark_explicit(key: str) -> None:
    st.session_state[f"{key}_explicit"] = True


def _uploaded_here(pending: PendingRead, key: str) -> bool:
    """Whether this picker's uploader still holds the file being read (the same page's next run reads it there)."""
    up = st.session_state.get(f"{key}_upload") if pending.key == key else None
    return up is not None and getattr(up, "file_id", None) == pending.verdict[0]


def _take_read(pending: PendingRead, key: str, slot: str) -> None:
    """Wait here for a file uploaded on another page (or this one, before it was left) and make it the chosen data, as
    the picker it was uploaded on would have (its kind and check); its place in line or running time and Cancel are
    shown while it is read. A refusal names the file; one only for missing cells is stored with its rows dropped on
    request (the checkbox, unticked), so the page shows the refusal and the box."""
    waiting = _Waiting(pending.name, key, pending.verdict, slot)
    try:
        df, problem, raw = finish(pending, slot, on_wait=waiting)
    except jobs.JobCancelled:
        st.warning(f"Reading {pending.name} was cancelled. Upload it again to read it.", icon=":material/cancel:")
        return
    finally:
        waiting.clear()
    st.session_state.pop(f"{key}_source", None)  # the radio follows the new choice (an upload)
    try:
        if problem is not None:
            message, row, column, line = problem
            raise DataError(message, file=pending.name, row=row, column=column, line=line)
        _check(df, pending.display, pending.kind, pending.check)
    except DataError as err:
        if raw is not None:
            try:
                df, gone = drop_missing_rows(raw, file=pending.display, min_rows=2)
                _check(df, pending.display, pending.kind, pending.check)
            except DataError:
                pass
            else:
                ds = Dataset(pending.display, df, "upload", pending.kind, raw=raw, refusal=str(err), dropped=gone)
                ds.drop_missing = False
                store_dataset(ds, slot)
                return
        st.error(f"Upload rejected: {err}")
        still_using(st.session_state.get(slot))
        return
    store_dataset(Dataset(pending.display, df, "upload", pending.kind), slot)


def _current_for_page(kind: str | None, check: Callable | None, key: str, slot: str) -> Dataset | None:
    """The data chosen earlier (on any page), or None when they do not suit this page."""
    current: Dataset | None = st.session_state.get(slot)
    if current is None:
        return None
    if current.origin == "upload":  # an upload is judged on its contents, wherever it was chosen
        reason = _usable_here(current, kind, check, key)
        if reason is not None:
            st.warning(f"{current.name}, chosen earlier, cannot be used on this page: {reason} It stays chosen "
                       "for the pages that can use it.", icon=":material/warning:")
            return None
        return current
    if kind is not None and current.kind not in (kind, None):
        return None  # a sample set of another kind does not fit this page
    return current


def _sample_choice(kind: str | None, current: Dataset | None, key: str, slot: str, *,
                   store: bool = True, default_sample: str | None = None) -> Dataset | None:
    """The chosen sample set; stored as the selection unless ``store`` is False (a page default used while the
    stored choice, made elsewhere, does not suit this page)."""
    choices = sample_sets(kind) or sample_sets()
    titles = [s.title for s in choices]
    keys = [s.key for s in choices]
    default = keys.index(default_sample) if default_sample in keys else 0
    if current is not None and current.origin == "sample" and current.name in titles:
        default = titles.index(current.name)
    title = st.selectbox("Sample set", titles, index=default, key=f"{key}_sample", on_change=_mark_explicit,
                         args=(key,))
    chosen = choices[titles.index(title)]
    if current is None or current.name != chosen.title:
        try:
            df = _load_sample(chosen.key)
        except (DataError, OSError, ImportError) as err:
            st.error(
                f"Sample set '{chosen.title}' could not be read ({err}). "
                "Regenerate the samples with `python -m engine.data.samples`."
            )
        else:
            current = Dataset(chosen.title, df, "sample", chosen.kind, chosen.response_columns, key=chosen.key,
                              label_column=chosen.label_column or None)
            if store:
                store_dataset(current, slot)
    if current is not None and chosen.description:
        st.caption(chosen.description)
    return current


def _too_large(up, current: Dataset | None) -> bool:
    """A file over the size limit is refused on its size before reading (the engine's message)."""
    if up.size <= MAX_UPLOAD_BYTES:
        return False
    try:
        load_table(up)
    except DataError as err:
        st.error(f"Upload rejected: {err}")
        still_using(current)
        return True
    return False


def _load_upload(data: bytes, name: str, sheet: str | None, display: str, kind: str | None,
                 check: Callable | None, sheets: list, verdict: tuple, key: str, slot: str) -> pd.DataFrame:
    """The upload's table, or DataError / _ChooseSheet. A refused file stays in the uploader: its verdict is
    remembered instead of checking it on every rerun. The read is kept for ``slot`` (``ui.upload_read``): a page
    left before it ends takes its answer on the page the user lands on."""
    if len(sheets) > 1 and sheet is None:
        raise _ChooseSheet(f"{name}: the workbook has {len(sheets)} sheets "
                           f"({', '.join(repr(s) for s in sheets)}); choose the sheet with the data.")
    refused = st.session_state.get(f"{key}_refused")
    if refused is not None and refused[0] == verdict:
        raise DataError(refused[1], file=name)
    if st.session_state.get(f"{key}_cancelled") == verdict:
        pending = reading(slot)
        if pending is not None and pending.verdict == verdict:
            drop_read(slot)
        raise _Cancelled(f"Reading {name} was cancelled. Upload it again to read it.")
    waiting = _Waiting(name, key, verdict, slot)
    try:
        try:
            df, problem, _ = read_kept(data, name, sheet, slot, display=display, key=key, kind=kind, check=check,
                                       verdict=verdict, on_wait=waiting)
        except jobs.JobCancelled as err:
            raise _Cancelled(str(err)) from None
        finally:
            waiting.clear()
        if problem is not None:
            message, row, column, line = problem
            raise DataError(message, file=name, row=row, column=column, line=line)
        _check(df, display, kind, check)
    except DataError as err:
        st.session_state[f"{key}_refused"] = (verdict, str(err))
        raise
    return df


def _drop_box(key: str, name: str, count: int, value: bool, ds: Dataset | None = None) -> bool:
    """The checkbox "Drop rows with missing values (n rows)" of one file; its state starts from ``value`` and,
    for a stored data set ``ds``, is kept with it (so the choice follows the data to other pages)."""
    box_key = f"{key}_dropna_{name}"
    if box_key not in st.session_state:
        st.session_state[box_key] = value

    def _keep():
        if ds is not None:
            ds.drop_missing = bool(st.session_state[box_key])

    return st.checkbox(f"Drop rows with missing values ({count} row{'s' if count != 1 else ''})", key=box_key,
                       on_change=_keep, help="Leave out every row with an empty or 'n/a' cell in a numeric column "
                                             "instead of refusing the file. The rows left out are listed.")


def _missing_upload(data: bytes, name: str, sheet: str | None, display: str, kind: str | None,
                    check: Callable | None, current: Dataset | None, key: str, slot: str,
                    err: DataError) -> tuple[Dataset | None, bool]:
    """A file refused only for missing cells: the refusal and the checkbox; ticked, the file without those rows.
    Returns (the selection, whether the checkbox was shown)."""
    raw = try_load(data, name, sheet)[2]
    if raw is None:
        return None, False
    gone = drop_missing_rows(raw)[1]
    same = current if current is not None and current.name == display and current.raw is not None else None
    if not _drop_box(key, display, gone.count, False, same):
        st.error(f"Upload rejected: {err}")
        if same is not None:  # this file, its rows no longer dropped: no data here until the box is ticked
            return None, True
        still_using(current)
        return current, True
    try:
        df, gone = drop_missing_rows(raw, file=display, min_rows=2)
        _check(df, display, kind, check)
    except DataError as why:
        st.error(f"Upload rejected: {why}")
        still_using(current)
        return current, True
    if current is None or current.name != display or not current.df.equals(df):
        current = Dataset(display, df, "upload", kind, raw=raw, refusal=str(err), dropped=gone)
        current.checks[key] = None
        store_dataset(current, slot)
    current.drop_missing = True
    st.caption(f"Left out: {gone.describe()}.")
    return current, True


def _upload_choice(kind: str | None, check: Callable | None, current: Dataset | None, key: str,
                   slot: str) -> tuple[Dataset | None, bool]:
    """The upload (or the data chosen earlier while the uploader is empty), and whether the missing-values
    checkbox was shown here."""
    up = st.file_uploader(
        "CSV, TSV or XLSX: one row per sample (or per time step), one column per variable",
        type=None, key=f"{key}_upload",  # any name: the engine names a wrong format (e.g. .xls) itself
        on_change=_start_read, args=(key, slot, kind, check),
    )
    if up is None:
        if current is not None and current.origin == "upload":
            st.caption(f"Using {current.name}, chosen earlier; upload another file to replace it.")
        return current, False
    if _too_large(up, current):
        return current, False
    data = up.getvalue()
    sheet = None
    is_book = up.name.lower().endswith(".xlsx") and len(data) <= MAX_UPLOAD_BYTES
    sheets = _sheets(data, session_scope()) if is_book else []
    if len(sheets) > 1:
        sheet = st.selectbox(f"Sheet of {up.name}", sheets, index=None, placeholder="Choose the data sheet",
                             key=f"{key}_sheet_{up.name}")
    display = up.name if sheet is None else f"{up.name} [{sheet}]"
    verdict = (up.file_id, up.name, len(data), sheet)
    try:
        df = _load_upload(data, up.name, sheet, display, kind, check, sheets, verdict, key, slot)
    except _ChooseSheet as note:
        st.warning(str(note), icon=":material/table_view:")
        still_using(current)
    except _Cancelled as note:
        st.warning(str(note), icon=":material/cancel:")
        still_using(current)
    except DataError as err:
        chosen, shown = _missing_upload(data, up.name, sheet, display, kind, check, current, key, slot, err)
        if shown:
            return chosen, True
        st.error(f"Upload rejected: {err}")
        still_using(current)
    else:
        if current is None or current.name != display or not current.df.equals(df):
            current = Dataset(display, df, "upload", kind)
            current.checks[key] = None
            store_dataset(current, slot)
    return current, False


def _start_read(key: str, slot: str, kind: str | None, check: Callable | None) -> None:
    """The uploader's on_change: the read of a new CSV or TSV starts before the page draws anything, kept for
    ``slot`` (``ui.upload_read``), so a page link clicked at once finds it. A workbook waits for its sheet, and a
    file over the size limit is refused on the page, as before. A file removed from the uploader is no longer read."""
    up = st.session_state.get(f"{key}_upload")
    pending = reading(slot)
    if up is None and pending is not None and pending.key == key:
        drop_read(slot)  # the user removed the file being read
    if up is None or up.size > MAX_UPLOAD_BYTES or up.name.lower().endswith(".xlsx"):
        return
    data = up.getvalue()
    start_read(data, up.name, None, slot, display=up.name, key=key, kind=kind, check=check,
               verdict=(up.file_id, up.name, len(data), None))


def _read_one(up) -> pd.DataFrame:
    """One uploaded file's table, or DataError with the engine's message."""
    try:
        df, problem, _ = try_load(up.getvalue(), up.name)
    except jobs.JobCancelled as err:
        raise DataError(str(err), file=up.name) from None
    if problem is not None:
        message, row, column, line = problem
        raise DataError(message, file=up.name, row=row, column=column, line=line)
    return df


def _two_files_choice(kind: str | None, check: Callable | None, current: Dataset | None, key: str,
                      slot: str) -> Dataset | None:
    """A spectra file and a reference values file, matched by row order or by a shared id column
    (``engine.data.xy_files``); a mismatch shows the engine's message naming both files."""
    c1, c2 = st.columns(2)
    x_up = c1.file_uploader("Spectra (X): one row per sample, one column per wavelength", key=f"{key}_xfile")
    y_up = c2.file_uploader("Reference values (Y): one row per sample, one column per property", key=f"{key}_yfile")
    if x_up is None or y_up is None:
        if current is not None and current.files:
            st.caption(f"Using {current.name}, chosen earlier; upload two other files to replace them.")
        else:
            st.info("Upload both files: the spectra and the reference values of the same samples.")
        return current if current is not None and current.files else None
    display = f"{x_up.name} + {y_up.name}"
    try:
        x_df, y_df = _read_one(x_up), _read_one(y_up)
        shared = shared_columns(x_df, y_df)
        options = [None, *shared]
        on = st.radio("Match the rows", options, index=1 if len(shared) == 1 else 0, horizontal=True,
                      key=f"{key}_match_{display}",
                      format_func=lambda c: "by row order" if c is None else f"by the shared column '{c}'")
        df = join_xy(x_df, y_df, x_up.name, y_up.name, on=on)
        _check(df, display, kind, check)
    except DataError as err:
        st.error(f"Files rejected: {err}")
        still_using(current)
        return current
    responses = tuple(c for c in y_df.columns if c != on and pd.api.types.is_numeric_dtype(y_df[c]))
    if current is None or current.name != display or not current.df.equals(df):
        current = Dataset(display, df, "upload", kind, responses, files=(x_up.name, y_up.name))
        current.checks[key] = None
        store_dataset(current, slot)
    return current


def _stored_missing_choice(ds: Dataset, key: str) -> Dataset | None:
    """A stored upload whose rows with missing values are left out: the same checkbox on this page (unticked:
    the engine's refusal, and no data here until it is ticked again)."""
    if _drop_box(key, ds.name, ds.dropped.count, ds.drop_missing, ds):
        ds.drop_missing = True
        st.caption(f"Left out: {ds.dropped.describe()}.")
        return ds
    ds.drop_missing = False
    st.error(f"{ds.refusal} Tick 'Drop rows with missing values' to leave those rows out.")
    return None


def _preview(ds: Dataset) -> None:
    n_rows, n_cols = ds.df.shape
    n_num = len(ds.numeric_columns)
    st.markdown(
        f"**{ds.name}**: {n_rows} rows × {n_cols} columns ({n_num} numeric, {n_cols - n_num} text)."
    )
    with st.expander("Preview", expanded=False):
        st.dataframe(ds.df.head(20).iloc[:, :40], width="stretch")
        if n_cols > 40:
            st.caption(f"First 40 of {n_cols} columns shown.")


def usable_dataset(kind: str, *, key: str, hint: str, needs: str, min_numeric: int = 3,
                   two_files: bool = False, large: bool = False, default_sample: str | None = None) -> Dataset:
    """The data picker, and the page stops here (with a message) until a data set it can use is chosen.

    hint : what to do when nothing is chosen yet (an info box). needs : what the page needs, shown with the file's
    name and its number of numeric columns when it has fewer than ``min_numeric``. two_files: also offer
    "X and Y as two files"; large: also offer "Large data set on the server"; default_sample: ``data_picker``'s.
    """
    ds = data_picker(kind, key=key, two_files=two_files, large=large, default_sample=default_sample)
    if ds is None:
        st.info(hint)
        st.stop()
    n = len(ds.numeric_columns)
    if n < min_numeric:
        st.error(f"{ds.name}: {needs}; the file has {n} numeric column(s).")
        st.stop()
    return ds
