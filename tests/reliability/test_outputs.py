"""Report writing (``reports.atomic.write_atomic``) replaces only a regular file: a device, FIFO or
socket is written in place (issue 11: ``--json /dev/full`` once replaced the device node with a file)."""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path

import pytest

from reports.atomic import OutputWriteError, write_atomic


def _device(path: Path, minor: int) -> Path:
    """A private copy of /dev/full (minor 7) or /dev/null (minor 3): the system's nodes are never at risk."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD")
    return path


def test_a_full_device_is_written_in_place_and_its_enospc_names_the_path(tmp_path: Path) -> None:
    full = _device(tmp_path / "full", 7)
    with pytest.raises(OutputWriteError) as caught:
        write_atomic(full, "{}\n")
    assert caught.value.errno == errno.ENOSPC
    assert caught.value.strerror.startswith(f"cannot write {full}: No space left on device")
    assert stat.S_ISCHR(full.lstat().st_mode), "the device node was replaced"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"], "a temp file was left beside it"


def test_a_null_device_takes_the_report_and_stays_a_device(tmp_path: Path) -> None:
    null = _device(tmp_path / "null", 3)
    write_atomic(null, "report\n")
    assert stat.S_ISCHR(null.lstat().st_mode)


def test_a_fifo_is_written_in_place_for_the_process_that_reads_it(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    try:
        for _ in range(200):  # wait for the reader to open its end
            try:
                write_atomic(fifo, "x" * 200_000)
                break
            except OutputWriteError as exc:
                assert exc.errno == errno.ENXIO
                threading.Event().wait(0.01)
    finally:
        reader.join(10)
    assert got == [b"x" * 200_000]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_fifo_no_process_reads_is_refused_at_once_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OutputWriteError, match="it is a FIFO that no process reads"):
        write_atomic(fifo, "{}\n")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_symlink_stays_a_link_and_its_file_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "real.json").write_text("old")
    (tmp_path / "link.json").symlink_to("real.json")
    write_atomic(tmp_path / "link.json", "new")
    assert (tmp_path / "link.json").is_symlink() and (tmp_path / "real.json").read_text() == "new"


def test_a_replaced_file_keeps_its_mode_and_a_new_one_follows_the_umask(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    old.write_text("old")
    old.chmod(0o640)
    write_atomic(old, "new")
    assert stat.S_IMODE(old.stat().st_mode) == 0o640 and old.read_text() == "new"
    umask = os.umask(0o022)
    try:
        write_atomic(tmp_path / "new.json", "x")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o644  # was 0600 (mkstemp's)


def test_a_block_device_or_a_folder_is_refused_and_left_alone(tmp_path: Path) -> None:
    try:
        os.mknod(tmp_path / "blk", stat.S_IFBLK | 0o600, os.makedev(7, 0))
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD")
    with pytest.raises(OutputWriteError, match="not a regular file"):
        write_atomic(tmp_path / "blk", "x")
    assert stat.S_ISBLK((tmp_path / "blk").lstat().st_mode)
    (tmp_path / "dir").mkdir()
    with pytest.raises(OutputWriteError):
        write_atomic(tmp_path / "dir", "x")
    assert (tmp_path / "dir").is_dir()


def test_dev_stdout_redirected_to_a_file_is_written_through_the_descriptor_not_by_replacing_the_file(
        tmp_path: Path) -> None:
    # `seamgate run --json /dev/stdout > log.txt`: /dev/stdout resolves to log.txt, a regular file; replacing it
    # would leave the shell's descriptor on an unlinked inode and lose everything printed before and after.
    import subprocess
    import sys

    log = tmp_path / "log.txt"
    code = ("import sys; from pathlib import Path; from reports.atomic import write_atomic; "
            "print('before', flush=True); write_atomic(Path(sys.argv[1]), 'REPORT\\n'); print('after', flush=True)")
    with open(log, "w") as out:
        inode = os.fstat(out.fileno()).st_ino
        subprocess.run([sys.executable, "-c", code, "/dev/stdout"], stdout=out, check=True,
                       cwd=Path(__file__).resolve().parents[2])
    assert log.read_text() == "before\nREPORT\nafter\n"
    assert log.stat().st_ino == inode
