"""Safe extraction of uploaded repository archives (.tar.gz, .tgz, .tar, .zip).

Every entry is checked before anything is written: no absolute paths, no `..`, no links that
point outside the archive, no devices, and limits on the number of files and their total size.
"""

from __future__ import annotations

import stat
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")


class UnsafeArchive(ValueError):
    pass


def is_archive_name(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def archive_stem(name: str) -> str:
    base = Path(name).name
    for suffix in ARCHIVE_SUFFIXES:
        if base.lower().endswith(suffix):
            return base[: -len(suffix)]
    return base


def _check_member_path(name: str) -> PurePosixPath:
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise UnsafeArchive(f"archive entry {name!r} has an absolute path")
    path = PurePosixPath(name.replace("\\", "/"))
    if ".." in path.parts:
        raise UnsafeArchive(f"archive entry {name!r} contains '..' and would escape the archive")
    # A `.git` file ("gitdir: /elsewhere") or folder (alternates, config) would make git read
    # another repository on the server; an archive brings files, never git metadata.
    if any(part.lower() == ".git" for part in path.parts):
        raise UnsafeArchive(
            f"archive entry {name!r} is git metadata (.git); archives must hold the files only "
            "(import a git repository by its URL instead)"
        )
    return path


def _check_link_target(name: str, target: str) -> None:
    if target.startswith("/"):
        raise UnsafeArchive(f"archive entry {name!r} links to an absolute path {target!r}")
    resolved: list[str] = list(PurePosixPath(name).parent.parts)
    for part in PurePosixPath(target).parts:
        if part == "..":
            if not resolved:
                raise UnsafeArchive(
                    f"archive entry {name!r} links to {target!r}, outside the archive"
                )
            resolved.pop()
        elif part != ".":
            resolved.append(part)


def _check_limits(count: int, total: int, max_files: int, max_bytes: int) -> None:
    if count > max_files:
        raise UnsafeArchive(f"archive has more than {max_files} entries (the limit)")
    if total > max_bytes:
        raise UnsafeArchive(
            f"archive expands to more than {max_bytes} bytes (the limit); it has at least {total}"
        )


def extract_archive(archive: Path, dest: Path, *, max_files: int, max_bytes: int) -> Path:
    """Extract into `dest` after checking every entry; return the folder holding the project.

    Archives made by GitHub or sdists wrap everything in one top folder; that folder is returned.
    """
    if archive.stat().st_size > max_bytes:
        raise UnsafeArchive(f"archive file is larger than {max_bytes} bytes (the limit)")
    name = archive.name.lower()
    if name.endswith(".zip"):
        _extract_zip(archive, dest, max_files=max_files, max_bytes=max_bytes)
    elif name.endswith((".tar.gz", ".tgz", ".tar")):
        _extract_tar(archive, dest, max_files=max_files, max_bytes=max_bytes)
    else:
        raise UnsafeArchive(
            f"{archive.name!r} is not a supported archive ({', '.join(ARCHIVE_SUFFIXES)})"
        )
    entries = [p for p in dest.iterdir() if p.name not in {"__MACOSX"}]
    if not entries:
        raise UnsafeArchive("archive is empty")
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
        return entries[0]
    return dest


def inspect_archive(archive: Path, *, max_files: int, max_bytes: int) -> int:
    """Check every entry without writing anything; return the number of entries.

    The import job checks again when it extracts; this lets an upload be refused at once.
    """
    if archive.stat().st_size > max_bytes:
        raise UnsafeArchive(f"archive file is larger than {max_bytes} bytes (the limit)")
    name = archive.name.lower()
    try:
        if name.endswith(".zip"):
            with zipfile.ZipFile(archive) as zf:
                infos = zf.infolist()
                _check_zip_members(zf, infos, max_files=max_files, max_bytes=max_bytes)
                return len(infos)
        if name.endswith((".tar.gz", ".tgz", ".tar")):
            with tarfile.open(archive) as tar:
                members = tar.getmembers()
                _check_tar_members(members, max_files=max_files, max_bytes=max_bytes)
                return len(members)
    except zipfile.BadZipFile as exc:
        raise UnsafeArchive(f"archive could not be read: {exc}") from None
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise UnsafeArchive(f"archive could not be read: {exc}") from None
    raise UnsafeArchive(
        f"{archive.name!r} is not a supported archive ({', '.join(ARCHIVE_SUFFIXES)})"
    )


def _check_tar_members(members, *, max_files: int, max_bytes: int) -> None:
    _check_limits(len(members), sum(m.size for m in members if m.isfile()), max_files, max_bytes)
    for member in members:
        _check_member_path(member.name)
        if member.issym() or member.islnk():
            _check_link_target(member.name, member.linkname)
        elif not (member.isfile() or member.isdir()):
            raise UnsafeArchive(
                f"archive entry {member.name!r} is a device, fifo or other special file"
            )


def _check_zip_members(zf, infos, *, max_files: int, max_bytes: int) -> None:
    _check_limits(len(infos), sum(i.file_size for i in infos), max_files, max_bytes)
    for info in infos:
        _check_member_path(info.filename)
        if stat.S_ISLNK(info.external_attr >> 16):
            _check_link_target(info.filename, zf.read(info).decode(errors="replace"))
            raise UnsafeArchive(
                f"archive entry {info.filename!r} is a symbolic link; zip links are not "
                "supported, use a .tar.gz"
            )


def _extract_tar(archive: Path, dest: Path, *, max_files: int, max_bytes: int) -> None:
    try:
        with tarfile.open(archive) as tar:
            _check_tar_members(tar.getmembers(), max_files=max_files, max_bytes=max_bytes)
            # The checks above are ours; the 'data' filter is Python's own second line.
            tar.extractall(dest, filter="data")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise UnsafeArchive(f"archive could not be read: {exc}") from None


def _extract_zip(archive: Path, dest: Path, *, max_files: int, max_bytes: int) -> None:
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
            _check_zip_members(zf, infos, max_files=max_files, max_bytes=max_bytes)
            for info in infos:
                path = _check_member_path(info.filename)
                target = dest.joinpath(*path.parts)
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as source, target.open("wb") as out:
                    remaining = info.file_size
                    while chunk := source.read(1 << 20):
                        remaining -= len(chunk)
                        if remaining < 0:
                            raise UnsafeArchive(
                                f"archive entry {info.filename!r} is larger than it says"
                            )
                        out.write(chunk)
    except zipfile.BadZipFile as exc:
        raise UnsafeArchive(f"archive could not be read: {exc}") from None
