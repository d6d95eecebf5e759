import pytest

from stack import Stack


@pytest.fixture(scope="session")
def stack():
    running = Stack().start()
    yield running
    running.stop()


@pytest.fixture()
def http(stack):
    return stack.session()
