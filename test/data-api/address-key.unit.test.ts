import { expect } from 'chai';
import { addressKey } from '../../src/http/address.js';

/** The budget key of a client address (src/http/address.ts): IPv4 as it is, IPv6 by its /64, one key per address however it is written. */
describe('data API: the budget key of a client address (addressKey)', () => {
  it('keeps an IPv4 address as it is', () => {
    expect(addressKey('192.0.2.7')).to.equal('192.0.2.7');
    expect(addressKey('127.0.0.1')).to.equal('127.0.0.1');
  });

  it('reads an IPv4-mapped IPv6 address as its IPv4 address, in every spelling', () => {
    expect(addressKey('::ffff:192.0.2.7')).to.equal('192.0.2.7');
    expect(addressKey('::FFFF:192.0.2.7')).to.equal('192.0.2.7');
    expect(addressKey('::ffff:c000:207')).to.equal('192.0.2.7');
    expect(addressKey('0:0:0:0:0:ffff:192.0.2.7')).to.equal('192.0.2.7');
  });

  it('keys an IPv6 address by its /64, compressed or not', () => {
    expect(addressKey('::1')).to.equal('0:0:0:0');
    expect(addressKey('::')).to.equal('0:0:0:0');
    expect(addressKey('2001:db8::1')).to.equal('2001:db8:0:0');
    expect(addressKey('2001:db8:0:0:1:2:3:4')).to.equal('2001:db8:0:0');
    expect(addressKey('2001:db8:aa:bb::')).to.equal('2001:db8:aa:bb');
  });

  it('gives one key to every spelling of one /64: the full form, leading zeros, capitals', () => {
    const key = addressKey('2001:db8:1:2::9');
    expect(key).to.equal('2001:db8:1:2');
    for (const spelling of [
      '2001:0db8:0001:0002:0000:0000:0000:0009',
      '2001:DB8:1:2:0:0:0:9',
      '2001:db8:1:2:ffff:ffff:ffff:ffff',
      '2001:db8:01:002::',
    ])
      expect(addressKey(spelling), spelling).to.equal(key);
    expect(addressKey('2001:db8:1:3::9')).to.not.equal(key);
  });

  it('leaves out a link-local zone, and keeps what is no IP address as it is (never throws)', () => {
    expect(addressKey('fe80::1%eth0')).to.equal('fe80:0:0:0');
    expect(addressKey('')).to.equal('');
    expect(addressKey('not:an:address')).to.equal('not:an:address');
  });
});
