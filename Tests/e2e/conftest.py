import pytest

from stack import Stack


@pytest.fixture(scope="session")
def stack():
    # Generous rate limits: the suite sends bursts from one address. The
    # lifecycle test checks the default limits on a stack of its own.
    # No periodic sweep: tests that compare the whole database before and
    # after a refused request must not see expired rows vanish in between.
    running = Stack(extra_env={"GATEHOUSE_LOGIN_RATE": "1000r/s", "GATEHOUSE_TOKEN_RATE": "1000r/s",
                               "GATEHOUSE_AUTHORIZE_RATE": "1000r/s", "GATEHOUSE_SWEEP_INTERVAL": "86400"}).start()
    yield running
    running.remove()


@pytest.fixture()
def http(stack):
    return stack.session()
