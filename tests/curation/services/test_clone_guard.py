"""Git URLs from the browser and the API lead to public hosts only (no SSRF), pinned."""

import pytest

from curation.services.clone_guard import UnsafeCloneSource, clone_pins


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:5432/db.git",
        "https://localhost/x.git",
        "http://10.0.0.8/repo.git",
        "http://192.168.1.2/repo.git",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/x.git",
        "http://0.0.0.0/x.git",
    ],
)
def test_a_url_into_the_servers_network_is_refused(url):
    with pytest.raises(UnsafeCloneSource, match="inside the server's network"):
        clone_pins(url, allowed_hosts=[])


def test_an_operator_may_allow_an_internal_host():
    assert clone_pins("https://localhost/x.git", allowed_hosts=["localhost"]) == []
    assert clone_pins("https://git.corp.example/x.git", allowed_hosts=[".corp.example"]) == []


def test_a_public_host_is_pinned_to_its_addresses_and_redirects_are_off(monkeypatch):
    import socket

    def resolve(host, port, type):  # the machine has no general DNS: a fixed public answer
        assert (host, port) == ("example.org", 443)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", 443))]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    assert clone_pins("https://example.org/project.git", allowed_hosts=[]) == [
        "-c",
        "http.followRedirects=false",
        "-c",
        "http.curloptResolve=example.org:443:93.184.215.14",
    ]


def test_only_http_urls_are_cloned_this_way():
    for url in ("git://example.org/x.git", "ssh://example.org/x.git", "file:///etc"):
        with pytest.raises(UnsafeCloneSource):
            clone_pins(url, allowed_hosts=[])
